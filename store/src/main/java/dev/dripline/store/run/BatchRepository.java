package dev.dripline.store.run;

import dev.dripline.store.keys.KeyCodec;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;

/**
 * Table {@code batches}: the API reads pages of a run's batches and their counts per status; the
 * run's workflow activities alone write them: those that act on a run's batches at once (slot
 * recovery, a stop, a retry's re-queue), and the hot path of a batch — its claim, an attempt at it
 * and its chain, its outcome.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface BatchRepository extends GenericRepository<BatchEntry, BatchEntry.Key> {
  /**
   * The first and last keys of {@code batches} as {@link dev.dripline.spi.Key}s (bytes that {@link
   * dev.dripline.store.keys.KeyConverters} reads), in a statement where the table is {@code b}.
   * Every batch has them: the migrate step filled those of rows written before migration V13 before
   * V42 required them.
   */
  String KEYS = "b.start_key_bytes as start_key, b.end_key_bytes as end_key";

  /**
   * The column {@code batches_run_key_bytes_idx} (V44) orders a run's batches by: its first key.
   */
  String KEY_ORDER = "b.start_key_bytes";

  /** Run {@code r.id}'s batches of the status the literal that follows names, by index. */
  String COUNT_OF_STATUS = "(select count(*) from batches b where b.run_id = r.id and b.status = ";

  /** The columns of a page of batches ({@link BatchView}), over the row {@code b}. */
  String PAGE_COLUMNS =
      "select b.number, "
          + KEYS
          + ", b.size, b.status, b.attempts, b.error, b.started_at, b.finished_at from batches b";

  /**
   * Run {@code runId}'s batches of a page in number order, its numbers chosen by the subquery that
   * follows (closed by {@link #PAGE_END}): the skipped entries are read from the index alone, and
   * only the page's rows from the table, by primary key whatever plan the statement gets.
   */
  String PAGE_START =
      PAGE_COLUMNS + " where b.run_id = :runId and b.number = any (array (select n.number";

  /** Closes {@link #PAGE_START}'s subquery, ordered, with its limit and offset. */
  String PAGE_END = " order by n.number limit :limit offset :offset)) order by b.number";

  /**
   * A page of run {@code runId}'s batches in number order: {@code limit} of them after the first
   * {@code offset}. Their count comes from {@link #counts}.
   */
  @Query(PAGE_START + " from batches n where n.run_id = :runId" + PAGE_END)
  List<BatchView> page(long runId, int limit, long offset);

  /**
   * A page of run {@code runId}'s batches of status {@code status}, as {@link #page}: the statuses
   * are a statement of their own so that even a generic plan looks both columns up in {@code
   * batches_run_status_idx}, rather than every entry of the run.
   */
  @Query(PAGE_START + " from batches n where n.run_id = :runId and n.status = :status" + PAGE_END)
  List<BatchView> pageOfStatus(long runId, String status, int limit, long offset);

  /**
   * Batches per status of each of the given runs, none empty; absent statuses are absent. Completed
   * batches come from the run's counter ({@code run_key_counts}), the rest are counted by index:
   * they are few, while a run may have completed millions. {@code runIds} must not be empty (its
   * elements are bound one parameter each).
   *
   * <p>One index lookup per run and status, on both columns of {@code batches_run_status_idx}, each
   * status a literal of its own subquery: with the status a parameter (a join with the list of
   * statuses) the planner cannot tell the few pending batches from the million completed ones, and
   * in a database that holds one large run it would scan the whole table for each status; with
   * {@code run_id = any (…) and status in (…)} it would scan all of the run's entries while the
   * statistics do not yet know a new run's rows.
   */
  @Query(
      "select r.id as run_id, s.status, s.n as batches"
          + " from unnest(cast(array[:runIds] as bigint[])) r (id)"
          + " cross join lateral (values"
          + " ('pending', "
          + COUNT_OF_STATUS
          + "'pending')),"
          + " ('enqueued', "
          + COUNT_OF_STATUS
          + "'enqueued')),"
          + " ('running', "
          + COUNT_OF_STATUS
          + "'running')),"
          + " ('failed', "
          + COUNT_OF_STATUS
          + "'failed')),"
          + " ('stopped', "
          + COUNT_OF_STATUS
          + "'stopped'))"
          + ") s (status, n)"
          + " where s.n > 0"
          + " union all"
          + " select run_id, 'completed', cast(sum(completed_batches) as bigint)"
          + " from run_key_counts where run_id = any (cast(array[:runIds] as bigint[]))"
          + " group by run_id having sum(completed_batches) > 0")
  List<BatchCount> counts(List<Long> runIds);

  /**
   * Run {@code runId}'s last batch, in the records' key order, that starts at or before {@code key}
   * ({@link dev.dripline.store.keys.KeyCodec} bytes): the one that holds the key, unless it ends
   * before it. A backward index scan on {@code batches_run_key_bytes_idx} (migration V44), however
   * many batches the run has.
   */
  @Query(
      "select number, "
          + KEYS
          + ", size, status, attempts, error, started_at, finished_at from batches b"
          + " where run_id = :runId and "
          + KEY_ORDER
          + " <= :key order by "
          + KEY_ORDER
          + " desc limit 1")
  Optional<BatchView> lastStartingAtOrBefore(long runId, byte[] key);

  /**
   * Run {@code runId}'s first batch numbered {@code number} or above, by the primary key. Numbers
   * follow planning's key order, whatever the key's type and collation: a search by number finds a
   * key's batch in that order ({@code RunRecords.batchHolding}).
   */
  @Query(
      "select number, "
          + KEYS
          + ", size, status, attempts, error, started_at, finished_at from batches b"
          + " where run_id = :runId and number >= :number order by number limit 1")
  Optional<BatchView> firstNumberedFrom(long runId, int number);

  /** Run {@code runId}'s highest batch number, if it has a batch. */
  @Query("select number from batches where run_id = :runId order by number desc limit 1")
  Optional<Integer> lastNumber(long runId);

  /**
   * How text {@code a} compares with text {@code b} (-1, 0 or 1) in the collation of column {@code
   * keyColumn} of table {@code keyTable}: the order a table definition's key scan lists them in
   * (migration V33).
   */
  @Query("select dripline_key_text_order(:a, :b, :keyTable, :keyColumn)")
  int keyTextOrder(String a, String b, String keyTable, String keyColumn);

  // --- a run's batches, written by its workflow's activities (RunActivities) ---------------

  /**
   * Frees the slots of run {@code runId} whose holder is provably gone: batches {@code enqueued},
   * and batches {@code running} whose lease ran out, go back to pending (R5b).
   *
   * @return the batches moved back to pending
   */
  @Query(
      "update batches set status = 'pending', claim_token = null, chain_head = null,"
          + " holder = null, lease_until = null"
          + " where run_id = :runId and (status = 'enqueued' or (status = 'running'"
          + " and coalesce(lease_until, '-infinity') < now()))")
  int recoverSlots(long runId);

  /**
   * Stops run {@code runId}'s pending batches.
   *
   * @return the batches this call stopped (a repeated stop finds none pending)
   */
  @Query(
      "update batches set status = 'stopped', finished_at = now()"
          + " where run_id = :runId and status = 'pending'")
  int stopPending(long runId);

  /** Run {@code runId}'s open batches (pending or holding a slot) and its failed ones. */
  @Query(
      "select count(*) filter (where status in ('pending', 'enqueued', 'running')) as open,"
          + " count(*) filter (where status = 'failed') as failed"
          + " from batches where run_id = :runId")
  BatchTally tally(long runId);

  /**
   * Moves run {@code runId}'s batches in one of {@code statuses} back to pending with their error,
   * end, claim and failed attempts cleared (a retry, R8: each gets its attempts again). {@code
   * statuses} must not be empty (its elements are bound one parameter each).
   *
   * @return the batches moved back to pending
   */
  @Query(
      "update batches set status = 'pending', error = null, finished_at = null,"
          + " claim_token = null, chain_head = null, failed_attempts = 0"
          + " where run_id = :runId and status in (:statuses)")
  int requeue(long runId, List<String> statuses);

  // --- a run's planning and the metrics snapshot --------------------------------------------

  /**
   * Run {@code runId}'s pending batches, counted up to {@code limit}: the count stops there, so it
   * costs no more than {@code limit} index entries however many are pending, and it starts at the
   * run's pick cursor (migration V27), below which none is pending, so it does not read the entries
   * that batches which left pending since the last vacuum left behind.
   */
  @Query(
      "select count(*) from (select 1 from batches"
          + " where run_id = :runId and status = 'pending'"
          + " and number >= coalesce((select c.pending_from from run_pick_cursors c"
          + " where c.run_id = :runId), 1) limit :limit) p")
  long countPending(long runId, int limit);

  /**
   * Run {@code runId}'s last {@code limit} completed batches by number, summed: their keys and the
   * time each held its slot (from the claim that enqueued it, or its first attempt, to its
   * completion). A backward scan of {@code batches_run_status_idx} that stops after {@code limit}
   * entries, however many batches the run has: batch-size tuning's moving average (P4).
   *
   * <p>The status is compared with a subquery's value, which the planner does not know when it
   * plans: told {@code 'completed'}, which most of a run's batches are, it walks the primary key
   * down from the run's last batch instead, through every pending batch planned ahead (up to the
   * planning window: thousands) before it finds completed ones.
   */
  @Query(
      "select count(*) as batches, coalesce(sum(size), 0) as keys,"
          + " cast(coalesce(sum(greatest(0, extract(epoch from finished_at"
          + " - coalesce(enqueued_at, started_at)) * 1000)), 0) as float8) as millis"
          + " from (select size, enqueued_at, started_at, finished_at from batches"
          + " where run_id = :runId and status = (select 'completed')"
          + " order by number desc limit :limit) recent")
  RecentBatches recentBatches(long runId, int limit);

  /**
   * When run {@code runId}'s last {@code limit} completed batches by number finished, and their
   * sizes: the same bounded backward scan of {@code batches_run_status_idx} as {@link
   * #recentBatches}, for the dashboard's throughput chart.
   */
  @Query(
      "select finished_at, size from batches"
          + " where run_id = :runId and status = (select 'completed')"
          + " and finished_at is not null order by number desc limit :limit")
  List<CompletionPoint> recentCompletions(long runId, int limit);

  /**
   * Inserts a page of run {@code runId}'s batches as one statement (the arrays, one element per
   * batch, are unnested), not one per batch: a page of 100 batches is one statement for PostgreSQL
   * to parse, plan and run instead of 100. A batch whose number exists is left as it is; the
   * planner's compare-and-set on the run's cursor ({@link RunRepository#advancePlan}) in the same
   * transaction is what keeps two attempts from inserting the same page.
   *
   * @return the batches inserted
   */
  @Query(
      "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status)"
          + " select :runId, t.number, decode(t.start_hex, 'hex'), decode(t.end_hex, 'hex'),"
          + " t.size, 'pending'"
          + " from unnest(cast(:numbers as int[]), cast(:startKeys as text[]),"
          + " cast(:endKeys as text[]), cast(:sizes as int[]))"
          + " as t(number, start_hex, end_hex, size)"
          + " on conflict (run_id, number) do nothing")
  int insertPage(long runId, int[] numbers, String[] startKeys, String[] endKeys, int[] sizes);

  /**
   * Slot holders (batches enqueued or running) per backfill: a row for every backfill of the
   * catalogue ({@code backfill_definitions}), 0 when nothing is in flight, and for any other
   * backfill while it has an active run. The holders of each active run are its kept count ({@code
   * run_key_counts.holders}, migration V25): a run ends only once none of its batches holds a slot.
   * Reads {@code runs} and the catalogue too; it is here because what it counts is batches.
   */
  @Query(
      "with active as (select r.backfill, coalesce(sum(k.holders), 0) as inflight"
          + " from runs r left join run_key_counts k on k.run_id = r.id"
          + " where r.status in ('pending', 'running', 'paused')"
          + " group by r.backfill)"
          + " select coalesce(d.name, a.backfill) as backfill,"
          + " cast(coalesce(a.inflight, 0) as bigint) as inflight"
          + " from backfill_definitions d full join active a on a.backfill = d.name"
          + " order by 1")
  List<BackfillInflight> inflightPerBackfill();

  // --- the batch hot path: an attempt at a batch, its chain, the claim and a failure -------
  //
  // Statements that change batches and return them are functions of migrations V20 and V21, each
  // called by one @Query (docs/design.md, "The claim functions").

  /**
   * Marks batch {@code number} running under {@code holder}, counting an attempt, with a lease of
   * {@code leaseMillis}. Guard: the batch holds a slot — {@code enqueued}, or {@code running} under
   * this same holder or a holder whose lease has run out — so a batch held by a live attempt is
   * never taken from it (R5b), and one that lost its slot is not run.
   *
   * @return the batch, empty if the guard did not hold
   */
  @Query(
      "select number, start_key, end_key, size, options, pool"
          + " from dripline_start_batch(:runId, :number, :holder, :leaseMillis)")
  Optional<BatchStart> startHead(long runId, int number, String holder, long leaseMillis);

  /**
   * Renews the lease of batch {@code number}. Guard: it is still running under {@code holder}, so
   * an attempt that lost its batch renews nothing.
   *
   * @return 1 if renewed, 0 if the batch is not this holder's any more
   */
  @Query(
      "update batches set lease_until = now() + :leaseMillis * interval '1 millisecond'"
          + " where run_id = :runId and number = :number and holder = :holder"
          + " and status = 'running'")
  int renewLease(long runId, int number, String holder, long leaseMillis);

  /**
   * Batches numbered {@code number} running under a holder other than {@code exceptHolder} (null:
   * any holder) whose lease is live: an attempt that has not stopped yet, which no other may
   * replace (R5b). 0 or 1.
   */
  @Query(
      "select count(*) from batches where run_id = :runId and number = :number"
          + " and status = 'running' and holder is distinct from :exceptHolder"
          + " and lease_until >= now()")
  long heldLive(long runId, int number, @Nullable String exceptHolder);

  /** {@link #heldLive}, for the batch the chain headed by {@code headNumber} holds. */
  @Query(
      "select count(*) from batches where run_id = :runId and chain_head = :headNumber"
          + " and status = 'running' and holder is distinct from :exceptHolder"
          + " and lease_until >= now()")
  long chainHeldLive(long runId, int headNumber, @Nullable String exceptHolder);

  /**
   * The last error of batch {@code number} if it holds a slot and has failed {@code maxAttempts}
   * attempts already: its last attempt recorded that, but the failure never reached Temporal (timed
   * out meanwhile), so Temporal tried again.
   */
  @Query(
      "select coalesce(error, 'failed') from batches where run_id = :runId and number = :number"
          + " and status in ('enqueued', 'running') and failed_attempts >= :maxAttempts")
  Optional<String> exhaustedError(long runId, int number, int maxAttempts);

  /** Batch {@code number}'s status and size, if it exists. */
  @Query("select status, size from batches where run_id = :runId and number = :number")
  Optional<BatchProgress> progress(long runId, int number);

  /**
   * The batch the chain headed by {@code headNumber} holds, resumed under {@code holder} with its
   * lease renewed (function {@code dripline_resume_chain}). {@code newAttempt}: a new attempt of
   * the chain's activity takes it over, its attempt counted, from {@code holder} or a holder whose
   * lease has run out (the earlier attempt, dead); else the same attempt resumes it after it lost
   * PostgreSQL, counting none, and it must be running under {@code holder}.
   */
  @Query(
      "select number, start_key, end_key, size, options, pool"
          + " from dripline_resume_chain(:runId, :headNumber, :holder, :leaseMillis, :newAttempt)")
  Optional<BatchStart> resumeChain(
      long runId, int headNumber, String holder, long leaseMillis, boolean newAttempt);

  /**
   * A chain that holds no batch claims its next one (function {@code dripline_claim_next},
   * migration V20): the run's lowest pending batch, into the chain headed by {@code headNumber}
   * (pending → running, an attempt counted, {@code holder}'s lease), under the run row's lock, if
   * the run is running, not stopping, nothing holds it, its cap covers {@code lane} and its slot
   * holders leave a slot free.
   *
   * @return the batch taken, empty if none is pending or the run's state or cap forbids it
   */
  @Query(
      "select number, start_key, end_key, size, options, pool"
          + " from dripline_claim_next(:runId, :headNumber, :lane, :holder, :leaseMillis)")
  Optional<BatchStart> claimNext(
      long runId, int headNumber, int lane, String holder, long leaseMillis);

  /**
   * Records batch {@code number} completed, releasing its slot (function {@code
   * dripline_complete_batch}, migrations V20 and V25): the running → completed compare-and-set
   * under {@code holder}, the run's processed keys and completed batches (in the session's shard)
   * and the outcome counter in shard {@code shard}. Fails with SQLSTATE {@code DL001}, recording
   * nothing, if the batch was not running under {@code holder} any more.
   */
  @Query(
      "select backfill, slot_seconds"
          + " from dripline_complete_batch(:runId, :number, :holder, :shard)")
  BatchDone complete(long runId, int number, String holder, int shard);

  /**
   * {@link #complete} and the claim of the chain's next batch in one transaction and one round trip
   * (function {@code dripline_complete_and_claim_next}, migrations V20 and V30): the next batch
   * replaces the holder just released, so the run's holders are not written. Fails as {@link
   * #complete} does, claiming nothing.
   */
  @Query(
      "select backfill, slot_seconds, number, start_key, end_key, size, options, pool"
          + " from dripline_complete_and_claim_next(:runId, :number, :holder, :shard,"
          + " :headNumber, :leaseMillis, :lane)")
  ChainStep completeAndClaimNext(
      long runId, int number, String holder, int shard, int headNumber, long leaseMillis, int lane);

  /**
   * {@link #complete} and COMMIT in one round trip, on {@code transaction} (its work, then the
   * record and the commit). A repository query cannot carry the COMMIT, so this is the same call in
   * JDBC with the COMMIT behind it. When the batch was not running under {@code holder} any more
   * the call fails with SQLSTATE {@code DL001}, the COMMIT behind it does not run, and the caller
   * rolls back: the batch's writes are not committed.
   */
  default BatchDone completeAndCommit(
      Connection transaction, long runId, int number, String holder, int shard)
      throws SQLException {
    try (PreparedStatement call =
        transaction.prepareStatement(
            "select backfill, slot_seconds from dripline_complete_batch(?, ?, ?, ?); commit")) {
      call.setLong(1, runId);
      call.setInt(2, number);
      call.setString(3, holder);
      call.setInt(4, shard);
      call.execute();
      try (ResultSet row = call.getResultSet()) {
        row.next();
        return new BatchDone(row.getString("backfill"), doubleOrNull(row, "slot_seconds"));
      }
    }
  }

  /**
   * {@link #completeAndClaimNext} and COMMIT in one round trip, on {@code transaction}; fails as
   * {@link #completeAndCommit} does, committing nothing, when the batch was not running under
   * {@code holder} any more.
   */
  default ChainStep completeClaimNextAndCommit(
      Connection transaction,
      long runId,
      int number,
      String holder,
      int shard,
      int headNumber,
      long leaseMillis,
      int lane)
      throws SQLException {
    try (PreparedStatement call =
        transaction.prepareStatement(
            "select backfill, slot_seconds, number, start_key, end_key, size, options, pool"
                + " from dripline_complete_and_claim_next(?, ?, ?, ?, ?, ?, ?); commit")) {
      call.setLong(1, runId);
      call.setInt(2, number);
      call.setString(3, holder);
      call.setInt(4, shard);
      call.setInt(5, headNumber);
      call.setLong(6, leaseMillis);
      call.setInt(7, lane);
      call.execute();
      try (ResultSet row = call.getResultSet()) {
        row.next();
        int next = row.getInt("number");
        boolean claimed = !row.wasNull();
        return new ChainStep(
            row.getString("backfill"),
            doubleOrNull(row, "slot_seconds"),
            claimed ? next : null,
            KeyCodec.decodeOrNull(row.getBytes("start_key")),
            KeyCodec.decodeOrNull(row.getBytes("end_key")),
            claimed ? row.getInt("size") : null,
            row.getString("options"),
            row.getString("pool"));
      }
    }
  }

  private static Double doubleOrNull(ResultSet row, String column) throws SQLException {
    double value = row.getDouble(column);
    return row.wasNull() ? null : value;
  }

  /**
   * Records the error of an attempt that failed, counts it among the batch's failed attempts if it
   * {@code counts} (migration V15), and ends its lease, so the next attempt need not wait for it to
   * run out. Guard: the batch is still running under {@code holder}.
   *
   * @return the batch's failed attempts so far, 0 if the guard did not hold
   */
  @Query("select coalesce(dripline_attempt_failed(:runId, :number, :holder, :error, :counts), 0)")
  int recordAttemptFailed(long runId, int number, String holder, String error, boolean counts);

  /**
   * Puts back to pending the batches the chain headed by {@code headNumber} holds under {@code
   * holder}, but batch {@code except}. Guard: running, under that holder.
   */
  @Query(
      "update batches set status = 'pending', claim_token = null,"
          + " chain_head = null, holder = null, lease_until = null"
          + " where run_id = :runId and chain_head = :headNumber and status = 'running'"
          + " and number <> :except and holder = :holder")
  int releaseHeldByChain(long runId, int headNumber, int except, String holder);

  /**
   * The workflow's claim (function {@code dripline_claim_batches}, migration V20): up to {@code
   * limit} of run {@code runId}'s lowest pending batches enqueued under claim {@code token}, under
   * the run row's lock; a repeat of the token is answered from the batches it took; a held run
   * takes nothing (its held time booked); at most the effective cap (the least of the run's, its
   * definition's and {@code safetyCap}) less the run's slot holders.
   *
   * @return a row per batch claimed, or one row without a batch; none if the run does not exist
   */
  @Query(
      "select number, start_key, end_key, size, slots_full, holds, held_since, throttled_millis"
          + " from dripline_claim_batches(:runId, :token, :limit, :safetyCap)")
  List<ClaimRow> claim(long runId, long token, int limit, int safetyCap);

  /**
   * Fails batch {@code number} with {@code error}. Guard: it holds a slot ({@code enqueued} or
   * {@code running}); a repeat, or a batch that lost its slot, changes nothing.
   *
   * @return the outcome recorded, empty if the guard did not hold
   */
  @Query("select backfill, slot_seconds from dripline_fail_batch(:runId, :number, :error)")
  Optional<BatchDone> fail(long runId, int number, String error);

  /**
   * Locks batch {@code number} and the batches the chain it heads holds ({@code running}) until the
   * transaction ends: a batch's failure takes them before it writes any counter row, in the order
   * every statement of the engine takes its locks (run, batches, counters: migration V25).
   *
   * @return the numbers of the batches locked
   */
  @Query(
      "select number from batches where run_id = :runId"
          + " and (number = :number or (chain_head = :number and status = 'running'))"
          + " order by number for update")
  List<Integer> lockForFailure(long runId, int number);

  /**
   * The batches the chain headed by {@code headNumber} still holds once its holder's lease ran out:
   * back to pending while they have attempts left ({@code failed_attempts < maxAttempts}: an
   * attempt that died with its worker spends none), failed with {@code error} once they have none.
   * Guard: running, lease run out.
   */
  @Query(
      "select number, status, backfill, slot_seconds"
          + " from dripline_release_chain_of_failed(:runId, :headNumber, :maxAttempts, :error)")
  List<ReleasedBatch> releaseChainOfFailed(
      long runId, int headNumber, int maxAttempts, String error);
}

package dev.dripline.store.run;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.Page;
import io.micronaut.data.model.Pageable;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.List;

/**
 * Table {@code batches}: the API reads pages of a run's batches and their counts per status; the
 * run's workflow activities alone write them. Here, those that act on a run's batches at once (slot
 * recovery, a stop, a retry's re-queue); the claim and a batch's own outcomes are still statements
 * of the activities.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface BatchStore extends GenericRepository<BatchEntry, BatchEntry.Key> {
  /** A run's batches, of one status ({@code null}: any). */
  String FILTER = " where run_id = :runId and (cast(:status as text) is null or status = :status)";

  /** A page of run {@code runId}'s batches in number order, of one status ({@code null}: any). */
  @Query(
      value =
          "select number, start_key, end_key, size, status, attempts, error, started_at,"
              + " finished_at from batches"
              + FILTER
              + " order by number",
      countQuery = "select count(*) from batches" + FILTER)
  Page<BatchView> page(long runId, @Nullable String status, Pageable pageable);

  /**
   * Batches per status of each of the given runs, none empty; absent statuses are absent. Completed
   * batches come from the run's counter ({@code run_key_counts}), the rest are counted by index:
   * they are few, while a run may have completed millions. {@code runIds} must not be empty (its
   * elements are bound one parameter each).
   *
   * <p>One index lookup per run and status, on both columns of {@code batches_run_status_idx}: with
   * {@code run_id = any (…) and status in (…)} the planner, while the statistics did not yet know a
   * new run's rows, scanned all of the run's entries and filtered the statuses (W3 in
   * docs/benchmarks.md: 46,788 heap fetches and 60 ms per GET 25 s into a run, until autoanalyze
   * changed the plan).
   */
  @Query(
      "select r.id as run_id, s.status, c.n as batches"
          + " from unnest(cast(array[:runIds] as bigint[])) r (id)"
          + " cross join unnest(array['pending', 'enqueued', 'running', 'failed',"
          + " 'stopped']) s (status)"
          + " cross join lateral (select count(*) as n from batches b"
          + " where b.run_id = r.id and b.status = s.status) c"
          + " where c.n > 0"
          + " union all"
          + " select run_id, 'completed', cast(sum(completed_batches) as bigint)"
          + " from run_key_counts where run_id = any (cast(array[:runIds] as bigint[]))"
          + " group by run_id having sum(completed_batches) > 0")
  List<BatchCount> counts(List<Long> runIds);

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
   * end and claim cleared (a retry, R8). {@code statuses} must not be empty (its elements are bound
   * one parameter each).
   *
   * @return the batches moved back to pending
   */
  @Query(
      "update batches set status = 'pending', error = null, finished_at = null,"
          + " claim_token = null, chain_head = null"
          + " where run_id = :runId and status in (:statuses)")
  int requeue(long runId, List<String> statuses);

  // --- a run's planning and the metrics snapshot --------------------------------------------

  /**
   * Run {@code runId}'s pending batches, counted up to {@code limit}: the count stops there, so it
   * costs no more than {@code limit} index entries however many are pending.
   */
  @Query(
      "select count(*) from (select 1 from batches"
          + " where run_id = :runId and status = 'pending' limit :limit) p")
  long countPending(long runId, int limit);

  /**
   * Inserts a page of run {@code runId}'s batches as one statement (the arrays, one element per
   * batch, are unnested), not one per batch: a page of 100 batches is one statement for PostgreSQL
   * to parse, plan and run instead of 100. A batch whose number exists is left as it is; the
   * planner's compare-and-set on the run's cursor ({@link RunStore#advancePlan}) in the same
   * transaction is what keeps two attempts from inserting the same page.
   *
   * @return the batches inserted
   */
  @Query(
      "insert into batches (run_id, number, start_key, end_key, size, status)"
          + " select :runId, t.number, t.start_key, t.end_key, t.size, 'pending'"
          + " from unnest(cast(:numbers as int[]), cast(:starts as bigint[]),"
          + " cast(:ends as bigint[]), cast(:sizes as int[]))"
          + " as t(number, start_key, end_key, size)"
          + " on conflict (run_id, number) do nothing")
  int insertPage(long runId, int[] numbers, long[] starts, long[] ends, int[] sizes);

  /**
   * Slot holders (batches enqueued or running) per backfill: a row for every backfill of the
   * catalogue ({@code backfill_definitions}), 0 when nothing is in flight, and for any other
   * backfill while it has an active run or a slot held. Reads {@code runs} and the catalogue too;
   * it is here because what it counts is batches.
   */
  @Query(
      "with holders as (select run_id, count(*) as held from batches"
          + " where status in ('enqueued', 'running') group by run_id),"
          + " active as (select r.backfill, coalesce(sum(h.held), 0) as inflight"
          + " from runs r left join holders h on h.run_id = r.id"
          + " where r.status in ('pending', 'running', 'paused') or h.run_id is not null"
          + " group by r.backfill)"
          + " select coalesce(d.name, a.backfill) as backfill,"
          + " cast(coalesce(a.inflight, 0) as bigint) as inflight"
          + " from backfill_definitions d full join active a on a.backfill = d.name"
          + " order by 1")
  List<BackfillInflight> inflightPerBackfill();
}

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
}

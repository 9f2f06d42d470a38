package dev.dripline.store.run;

import dev.dripline.store.db.ShardedCounters;
import dev.dripline.store.metrics.GroupCount;
import dev.dripline.store.targets.RunToStop;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Table {@code runs}. The API inserts a run and deletes it while it is pending or over; every other
 * change of a run belongs to its workflow's activities ({@code RunActivities}): its start, status,
 * stop, cap and end, each a compare-and-set on the run's status, and its end decided under the run
 * row's lock ({@link #lock}). Deletes are single statements whose {@code where} clause is the
 * guard, so two concurrent requests cannot both win.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface RunRepository extends GenericRepository<RunEntry, Long> {
  /** A run with its computed columns ({@link RunView}), over the row {@code r}. */
  String RUN =
      "select r.id, r.backfill, cast(r.options as text) as options, r.batch_size, r.max_records,"
          + " r.requested_max_parallel_batches, r.max_parallel_batches, r.start_at, r.created_by,"
          + " r.status, r.error, r.workflow_id, r.total_keys, "
          + ShardedCounters.PROCESSED_KEYS_OF_R
          + " as processed_keys, r.created_at, r.updated_at, r.started_at, r.finished_at,"
          + " r.stop_requested_at is not null and r.status in ('pending', 'running', 'paused')"
          + " as stopping,"
          + " r.plan_done, r.held_since, r.throttled_millis, r.target_batch_millis,"
          + " r.min_batch_size, r.max_batch_size, r.current_batch_size, r.max_failed_batches_percent,"
          + " r.failure_budget_min_batches, r.failure_budget_spent_at, r.pool, r.nice_ratio,"
          // Only a spent budget's share is read: a count of the run's failed batches, by index.
          + " case when r.failure_budget_spent_at is not null then (select 100.0"
          + " * (c.failed - r.failure_budget_failed_base)"
          + " / greatest(1, c.finished - r.failure_budget_finished_base)"
          + " from dripline_finished_batches(r.id) c) end as failed_batches_percent from runs r";

  /** Runs of one status and/or one backfill; {@code null} matches every status or backfill. */
  String FILTER =
      " where (cast(:status as text) is null or r.status = :status)"
          + " and (cast(:backfill as text) is null or r.backfill = :backfill)";

  /** A fresh run id, drawn ahead of {@link #insert} (the workflow id is derived from it). */
  @Query("select nextval(pg_get_serial_sequence('runs', 'id'))")
  long nextId();

  /** Batches that must finish before a run's failure budget applies, unless it gives its own. */
  int DEFAULT_FAILURE_BUDGET_MIN_BATCHES = 20;

  /**
   * Inserts a pending run, the API's or a target's; {@code options} is stored as jsonb and, as
   * text, as its duplicate key (R3). A unique violation of {@code runs_one_active}, of the
   * idempotency key or of the target's planning attempt ({@code target_attempt}: a planning attempt
   * saves one run at most) throws. A tuned run (P4) gives its target, bounds and starting size; an
   * untuned one nulls. Its failure budget and pace ({@code niceRatio}) are its own, else its
   * definition's as published.
   *
   * @param targetName the target that planned the run, or {@code null} for a run of the API
   * @param targetAttempt the target's planning attempt that saved it, or {@code null}
   */
  @Query(
      "insert into runs (id, backfill, options, options_key, batch_size, max_records,"
          + " requested_max_parallel_batches, max_parallel_batches, start_at, created_by, status,"
          + " idempotency_key, workflow_id, target_batch_millis, min_batch_size, max_batch_size,"
          + " current_batch_size, max_failed_batches_percent, failure_budget_min_batches, pool,"
          + " nice_ratio, target_name, target_attempt)"
          + " values (:id, :backfill, cast(:options as jsonb), :options, :batchSize, :maxRecords,"
          + " :requestedMaxParallelBatches, :maxParallelBatches, :startAt, :createdBy, 'pending',"
          + " :idempotencyKey, :workflowId, :targetBatchMillis, :minBatchSize, :maxBatchSize,"
          + " :currentBatchSize,"
          // The run's failure budget, else its definition's as published, else none (P6b).
          + " coalesce(cast(:maxFailedBatchesPercent as float8),"
          + " (select d.max_failed_batches_percent from backfill_definitions d"
          + " where d.name = :backfill)), :failureBudgetMinBatches, :pool,"
          + " coalesce(cast(:niceRatio as float8), (select d.nice_ratio"
          + " from backfill_definitions d where d.name = :backfill), 0), :targetName,"
          + " :targetAttempt)")
  int insert(
      long id,
      String backfill,
      String options,
      int batchSize,
      @Nullable Long maxRecords,
      @Nullable Integer requestedMaxParallelBatches,
      int maxParallelBatches,
      @Nullable Instant startAt,
      @Nullable String createdBy,
      @Nullable String idempotencyKey,
      String workflowId,
      @Nullable Long targetBatchMillis,
      @Nullable Integer minBatchSize,
      @Nullable Integer maxBatchSize,
      @Nullable Integer currentBatchSize,
      @Nullable Double maxFailedBatchesPercent,
      int failureBudgetMinBatches,
      @Nullable String pool,
      @Nullable Double niceRatio,
      @Nullable String targetName,
      @Nullable Long targetAttempt);

  /** Removes a run whose workflow could not be started: only while it is still pending. */
  @Query("delete from runs where id = :id and status = 'pending'")
  int deleteUnstarted(long id);

  /**
   * Deletes a pending or terminal run; 0 if there was none. Its batches stay until the purge
   * removes them in bounded deletes: a trigger records the run in {@code run_purges} (migration
   * V40).
   */
  @Query(
      "delete from runs where id = :id"
          + " and status in ('pending', 'completed', 'failed', 'stopped')")
  int deleteIfDeletable(long id);

  /** Run {@code id}. */
  @Query(RUN + " where r.id = :id")
  Optional<RunView> find(long id);

  /** The run created with this {@code Idempotency-Key}. */
  @Query(RUN + " where r.idempotency_key = :key")
  Optional<RunView> findByIdempotencyKey(String key);

  /** The active run a new run with these values would duplicate (R3), if any. */
  @Query(
      "select id from runs where backfill = :backfill and options_key = :optionsKey"
          + " and coalesce(max_records, -1) = coalesce(:maxRecords, -1)"
          + " and status in ('pending', 'running', 'paused')")
  Optional<Long> findActiveDuplicate(String backfill, String optionsKey, @Nullable Long maxRecords);

  /**
   * A page of runs, newest first, of one status and/or one backfill ({@code null}: any): {@code
   * limit} of them after the first {@code offset}. The page's ids are chosen first, from the
   * indexes, so that the computed columns are computed for the page's rows alone, not for every run
   * a late page skips.
   */
  @Query(
      RUN
          + " where r.id = any (array (select r.id from runs r"
          + FILTER
          + " order by r.id desc limit :limit offset :offset)) order by r.id desc")
  List<RunView> list(@Nullable String status, @Nullable String backfill, int limit, long offset);

  /**
   * How many runs there are: {@link #list}'s total without a filter. Each filter's count is a
   * statement of its own, so that even a generic plan reads the narrowest index that answers it.
   */
  @Query("select count(*) from runs")
  long countAll();

  /** How many runs of status {@code status} there are. */
  @Query("select count(*) from runs where status = :status")
  long countOfStatus(String status);

  /** How many runs of backfill {@code backfill} there are. */
  @Query("select count(*) from runs where backfill = :backfill")
  long countOfBackfill(String backfill);

  /** How many runs of status {@code status} and backfill {@code backfill} there are. */
  @Query("select count(*) from runs where status = :status and backfill = :backfill")
  long countOfStatusAndBackfill(String status, String backfill);

  // --- a run's lifecycle, written by its workflow's activities (RunActivities) -------------

  /**
   * Run {@code id} as its workflow loads it, with its definition's cap (none if the definition is
   * unknown) and its processed keys.
   */
  @Query(
      "select r.backfill, r.status, r.batch_size, r.requested_max_parallel_batches,"
          + " r.max_parallel_batches, d.max_parallel_batches as definition_cap, r.start_at,"
          + " r.started_at, r.total_keys, r.plan_done,"
          + " r.stop_requested_at is not null as stop_requested, "
          + ShardedCounters.PROCESSED_KEYS_OF_R
          + " as processed_keys, r.failure_budget_spent_at is not null as failure_budget_spent"
          + " from runs r left join backfill_definitions d on d.name = r.backfill"
          + " where r.id = :id")
  Optional<RunSettingsView> findSettings(long id);

  /**
   * Moves a pending run to running, stamping its start once; or, if a stop of it was recorded while
   * it was pending ({@link #recordStopOfPending}), ends it stopped instead, before any batch.
   *
   * @return 0 if the run was not pending (or is gone): nothing was written
   */
  @Query(
      "update runs set status = case when stop_requested_at is null then 'running'"
          + " else 'stopped' end,"
          + " started_at = case when stop_requested_at is null then coalesce(started_at, now())"
          + " else started_at end,"
          + " finished_at = case when stop_requested_at is null then finished_at else now() end,"
          + " updated_at = now() where id = :id and status = 'pending'")
  int markRunning(long id);

  /**
   * Records that a pending run is to be stopped (R2), the first time only; 0 if it is not pending.
   * The run's workflow ends it: on the stop signal the API sends with it, on the one the reconciler
   * sends while the record says so ({@link #findPendingStopRequested}), or, whichever comes first,
   * when its start time comes ({@link #markRunning}).
   */
  @Query(
      "update runs set stop_requested_at = coalesce(stop_requested_at, now()), updated_at = now()"
          + " where id = :id and status = 'pending'")
  int recordStopOfPending(long id);

  /** The pending runs whose stop is recorded ({@link #recordStopOfPending}), by id. */
  @Query(
      "select id, backfill, status, target_name from runs"
          + " where status = 'pending' and stop_requested_at is not null order by id")
  List<ActiveRunRef> findPendingStopRequested();

  /**
   * Records a live run's status: {@code running} or {@code paused} once it has started; {@code
   * paused} or {@code pending} again before it started (R9: paused while pending, then resumed). 0
   * if the run is not live, or the change does not fit whether it started.
   */
  @Query(
      "update runs set status = :status, updated_at = now() where id = :id and ((started_at is not"
          + " null and status in ('running', 'paused') and :status in ('running', 'paused')) or"
          + " (started_at is null and status in ('pending', 'paused')"
          + " and :status in ('pending', 'paused')))")
  int recordStatus(long id, String status);

  /**
   * Spends run {@code id}'s failure budget (P6b) if the batches that finished since it was renewed
   * fail beyond it; called in the transaction that fails a batch. True if it was spent now.
   */
  @Query("select dripline_spend_failure_budget(:id)")
  boolean spendFailureBudget(long id);

  /**
   * Renews run {@code id}'s failure budget: from now on it counts only batches that finish after
   * this. {@code ifSpent}: only if it is spent (a resume); else always (a retry).
   */
  @Query("select 1 from dripline_renew_failure_budget(:id, :ifSpent)")
  int renewFailureBudget(long id, boolean ifSpent);

  /** Records that a live run is being stopped, the first time only; 0 if the run is not live. */
  @Query(
      "update runs set stop_requested_at = coalesce(stop_requested_at, now()), updated_at = now()"
          + " where id = :id and status in ('running', 'paused')")
  int recordStopRequested(long id);

  /** Records a run's requested and effective caps while it is active; 0 if it is not. */
  @Query(
      "update runs set requested_max_parallel_batches = :requested,"
          + " max_parallel_batches = :effective, updated_at = now()"
          + " where id = :id and status in ('pending', 'running', 'paused')")
  int recordCap(long id, int requested, int effective);

  /**
   * Records {@code effective} as run {@code id}'s cap, as the execution that loaded the run
   * computed it from {@code requested} and the definition's and engine's caps it runs under; a
   * compare-and-set on the requested cap it read (a cap change recorded since then wins), which
   * writes nothing when the record already holds {@code effective}. Whatever the run's status: an
   * ended run is loaded only by an execution that may revive it.
   */
  @Query(
      "update runs set max_parallel_batches = :effective, updated_at = now()"
          + " where id = :id and max_parallel_batches <> :effective"
          + " and requested_max_parallel_batches is not distinct from :requested")
  int recordLoadedCap(long id, @Nullable Integer requested, int effective);

  /**
   * Run {@code id}'s lifecycle columns, its row locked ({@code for update}) until the transaction
   * ends: this serialises a run's finish, its retries and the stop being recorded.
   */
  @Query(
      "select r.status, r.plan_done, r.stop_requested_at is not null as stop_requested,"
          + " r.backfill, r.finished_at, "
          + ShardedCounters.PROCESSED_KEYS_OF_R
          + " as processed_keys, r.last_requeue_token, r.last_requeue_count"
          + " from runs r where r.id = :id for update of r")
  Optional<RunState> lock(long id);

  /** Remembers the re-queue {@code token} applied to run {@code id} and what it moved. */
  @Query("update runs set last_requeue_token = :token, last_requeue_count = :count where id = :id")
  int recordRequeue(long id, String token, int count);

  /**
   * Ends run {@code id} in a terminal {@code status}; once planning is done, its total keys are the
   * planned ones unless already set. Call it under {@link #lock}, after deciding the ending.
   */
  @Query(
      "update runs r set status = :status, error = :error, finished_at = now(), updated_at = now(),"
          + " total_keys = case when plan_done then coalesce(total_keys, planned_keys)"
          + " else total_keys end"
          + " where r.id = :id")
  int markEnded(long id, String status, @Nullable String error);

  /**
   * Re-opens an ended run as running (a retry, R8): its error, end and stop are cleared, and a run
   * stopped before it started is started now (a running run's record has a start time, which the
   * status it may record next — {@link #recordStatus} — depends on).
   */
  @Query(
      "update runs set status = 'running', error = null, finished_at = null,"
          + " stop_requested_at = null, started_at = coalesce(started_at, now()),"
          + " updated_at = now() where id = :id")
  int reopen(long id);

  /** Clears a run's error (a retry of a live run re-queued its failed batches). */
  @Query("update runs set error = null, updated_at = now() where id = :id")
  int clearError(long id);

  // --- a target's runs, a run's planning, the reconciler and the metrics snapshot ----------

  /** What a target's planning reads of a run ({@link RunSummary}), over the table's row. */
  String SUMMARY = "select id, backfill, batch_size, status from runs";

  /**
   * The run that planning attempt {@code attempt} of target {@code target} saved, whatever became
   * of it ({@code runs.target_attempt} is unique: one run per planning attempt).
   */
  @Query(SUMMARY + " where target_attempt = :attempt and target_name = :target")
  Optional<RunSummary> findByTargetAttempt(long attempt, String target);

  /** Run {@code id}, whatever its status. */
  @Query(SUMMARY + " where id = :id")
  Optional<RunSummary> findSummary(long id);

  /** Run {@code id} only while it is active (pending, running or paused). */
  @Query(SUMMARY + " where id = :id and status in ('pending', 'running', 'paused')")
  Optional<RunSummary> findActiveSummary(long id);

  /**
   * The active runs of target {@code target} — those recorded for it, and {@code currentRunId}
   * whatever it is recorded for — except {@code keep} ({@code null}: none), by id.
   */
  @Query(
      "select id as run_id, backfill from runs where status in ('pending', 'running', 'paused')"
          + " and (target_name = :target or id = :currentRunId) and id is distinct from :keep"
          + " order by id")
  List<RunToStop> findActiveOfTarget(
      String target, @Nullable Long currentRunId, @Nullable Long keep);

  /** Run {@code id} as its target observes it: status, error and processed keys. */
  @Query(
      "select r.status, r.error, "
          + ShardedCounters.PROCESSED_KEYS_OF_R
          + " as processed_keys from runs r where r.id = :id")
  Optional<ObservedRun> findOutcome(long id);

  /**
   * Run {@code id}'s planning state ({@link PlanCursor}). The cursor is the bytes {@code
   * plan_cursor_key}: the migrate step filled them from the bigint {@code plan_cursor} where the
   * release before typed keys left only that, and the release before this one writes both.
   */
  @Query(
      "select backfill, cast(options as text) as options, status,"
          + " stop_requested_at is not null as stop_requested, batch_size, max_records,"
          + " plan_cursor_key as plan_cursor,"
          + " plan_done, next_batch_number, planned_keys, total_keys, target_batch_millis,"
          + " min_batch_size, max_batch_size, current_batch_size"
          + " from runs where id = :id")
  Optional<PlanCursor> findPlanCursor(long id);

  /**
   * Saves run {@code id}'s planning cursor after a page, only while its next batch number is still
   * {@code expectedNextBatchNumber}, planning is not done and the run is active (compare-and-set):
   * of two attempts that planned the same page one wins, and the loser, which waited on the row
   * lock this takes, matches no row and must not insert its batches.
   *
   * <p>The cursor is {@code planCursorKey}'s bytes ({@link dev.dripline.store.keys.KeyCodec}). The
   * bigint {@code plan_cursor} is cleared: the release before this one, which may run beside it,
   * reads the bigint first when it is set. A tuned run's page also records the size it was cut to
   * ({@code currentBatchSize}; null keeps the recorded one).
   *
   * @return 0 if the cursor moved on (or the run ended or is gone): nothing was written
   */
  @Query(
      "update runs set plan_cursor_key = :planCursorKey, plan_cursor = null,"
          + " next_batch_number = :nextBatchNumber,"
          + " planned_keys = :plannedKeys, plan_done = :done, total_keys = :totalKeys,"
          + " current_batch_size = coalesce(:currentBatchSize, current_batch_size),"
          + " updated_at = now()"
          + " where id = :id and next_batch_number = :expectedNextBatchNumber and not plan_done"
          + " and status in ('pending', 'running', 'paused')")
  int advancePlan(
      long id,
      int expectedNextBatchNumber,
      @Nullable byte[] planCursorKey,
      int nextBatchNumber,
      long plannedKeys,
      boolean done,
      @Nullable Long totalKeys,
      @Nullable Integer currentBatchSize);

  /**
   * The active runs created over a minute ago by the database's clock, by id: younger ones are
   * still being started by the API.
   */
  @Query(
      "select id, backfill, status, target_name from runs"
          + " where status in ('pending', 'running', 'paused')"
          + " and created_at < now() - interval '1 minute' order by id")
  List<ActiveRunRef> findActiveOverAMinuteAgo();

  /**
   * Per backfill: its running runs that something holds now ({@code dripline_run_holds}, asked once
   * per backfill) and the time its runs have been held (booked and, for open holds, until now). A
   * row for every backfill of the catalogue, 0 when none is held, and for any other with an active
   * run or held time.
   */
  @Query(
      "with running as (select backfill, count(*) as runs from runs where status = 'running'"
          + " group by backfill),"
          + " held as (select backfill, runs from running"
          + " where cardinality(dripline_run_holds(backfill)) > 0),"
          + " booked as (select backfill, sum(throttled_millis + coalesce(cast(extract(epoch from"
          + " now() - held_since) * 1000 as bigint), 0)) / 1000.0 as seconds from runs"
          + " where throttled_millis > 0 or held_since is not null group by backfill)"
          + " select n.backfill, cast(coalesce(h.runs, 0) as bigint) as throttled,"
          + " cast(coalesce(b.seconds, 0) as float8) as throttled_seconds"
          + " from (select name as backfill from backfill_definitions"
          + " union select backfill from running union select backfill from booked) n"
          + " left join held h on h.backfill = n.backfill"
          + " left join booked b on b.backfill = n.backfill order by 1")
  List<BackfillThrottle> throttlePerBackfill();

  /** Runs per status; absent statuses are absent. */
  @Query("select status as value, count(*) as count from runs group by status")
  List<GroupCount> countByStatus();

  // --- the batch hot path -----------------------------------------------------------------

  /**
   * Locks run {@code id}'s row until the caller's transaction ends, as every claim that adds a slot
   * holder does before it counts the run's holders (R5b; the claim functions of migration V20).
   * Empty if the run does not exist.
   */
  @Query("select id from runs where id = :id for update")
  Optional<Long> lockRow(long id);

  /**
   * 1 while planning may still add batches a chain in lane {@code lane} could take: the run is
   * running, not stopping, its plan not done and its cap covers the lane; 0 otherwise.
   */
  @Query(
      "select count(*) from runs where id = :id and status = 'running'"
          + " and stop_requested_at is null and not plan_done and :lane <= max_parallel_batches")
  long planningGoesOn(long id, int lane);

  /**
   * Run {@code id}'s pace: how many times a batch's duration its lanes rest after each batch (0:
   * not paced); empty if the run is gone. Fixed when the run is created.
   */
  @Query("select nice_ratio from runs where id = :id")
  Optional<Double> findNiceRatio(long id);

  /**
   * 1 while run {@code id} may start a batch as far as the run itself says: it is running, not
   * stopping, its failure budget unspent and nothing holds it ({@code dripline_run_holds}) — the
   * conditions of {@code dripline_next_pending} (migration V25) but its slots; 0 otherwise. Asked
   * by a resting lane, which stops resting once it is 0.
   */
  @Query(
      "select count(*) from runs r where r.id = :id and r.status = 'running'"
          + " and r.stop_requested_at is null and r.failure_budget_spent_at is null"
          + " and cardinality(dripline_run_holds(r.backfill)) = 0")
  long mayStartBatches(long id);
}

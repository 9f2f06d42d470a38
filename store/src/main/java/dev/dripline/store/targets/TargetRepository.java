package dev.dripline.store.targets;

import dev.dripline.store.db.ShardedCounters;
import dev.dripline.store.metrics.GroupCount;
import dev.dripline.workflows.targets.TargetSnapshot;
import dev.dripline.workflows.targets.TargetState;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.Page;
import io.micronaut.data.model.Pageable;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Table {@code targets}. The API registers, replans and deletes targets; the target workflow's
 * activities move them through their states. Every change of state is a compare-and-set on the
 * state the caller read, under the row lock of {@link #lock}.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface TargetRepository extends GenericRepository<TargetEntry, String> {
  /**
   * A target with its queue of live batches and the statement's clock ({@link TargetWithQueue}).
   */
  String WITH_QUEUE =
      "select t.name, t.backfill, cast(t.options as text) as options, t.group_name, t.state,"
          + " t.consecutive_failures, t.first_failed_at, t.last_error, t.last_attempt_at,"
          + " t.next_attempt_at, t.current_run_id, t.observed_processed_keys, t.retry_run_id,"
          + " t.attempt_id, t.created_at, t.updated_at,"
          + " (select count(*) from live_batches l where l.target_name = t.name"
          + " and l.status = 'queued') as queued_live_batches,"
          + " (select min(l.created_at) from live_batches l where l.target_name = t.name"
          + " and l.status = 'queued') as oldest_queued_at,"
          + " now() as db_now"
          + " from targets t";

  /** Targets of one state and/or one group; {@code null} matches every state or group. */
  String FILTER =
      " where (cast(:state as text) is null or t.state = :state)"
          + " and (cast(:group as text) is null or t.group_name = :group)";

  /** The target named {@code name}, without locking it. */
  @Query(WITH_QUEUE + " where t.name = :name")
  Optional<TargetWithQueue> find(String name);

  /**
   * The target named {@code name}, its row locked ({@code for update}) until the transaction ends.
   */
  @Query(WITH_QUEUE + " where t.name = :name for update of t")
  Optional<TargetWithQueue> lock(String name);

  /** A page of targets by name, of one state and/or one group ({@code null}: any). */
  @Query(
      value = WITH_QUEUE + FILTER + " order by t.name",
      countQuery = "select count(*) from targets t" + FILTER)
  Page<TargetWithQueue> list(@Nullable String state, @Nullable String group, Pageable pageable);

  /**
   * A page of targets, failing ones first (state {@code needs_resync}, or a streak of at least
   * {@code failingStreak} while not primed; the longest streak first), then the stuck ones (not
   * primed, with live batches queued), then the rest, each by name: the dashboard's list.
   */
  @Query(
      value =
          WITH_QUEUE
              + " order by (t.state = 'needs_resync' or (t.state <> 'primed'"
              + " and t.consecutive_failures >= :failingStreak)) desc,"
              + " (t.state <> 'primed' and exists (select 1 from live_batches l"
              + " where l.target_name = t.name and l.status = 'queued')) desc,"
              + " t.consecutive_failures desc, t.name",
      countQuery = "select count(*) from targets t where :failingStreak = :failingStreak")
  Page<TargetWithQueue> listFailingFirst(int failingStreak, Pageable pageable);

  /**
   * Registers a target in {@code pending_backfill} with an empty streak (spec T1).
   *
   * @return 0 if a target of that name exists (nothing written), else 1
   */
  @Query(
      "insert into targets (name, backfill, options, group_name, state, consecutive_failures)"
          + " values (:name, :backfill, cast(:options as jsonb), :group, 'pending_backfill', 0)"
          + " on conflict (name) do nothing")
  int register(String name, String backfill, String options, @Nullable String group);

  /**
   * Removes a target that never got going (its workflow could not be started): only while it is
   * still pending with no run.
   */
  @Query(
      "delete from targets where name = :name and state = 'pending_backfill'"
          + " and current_run_id is null")
  int deleteUnstarted(String name);

  /** Deletes the target and, by cascade, its live batches; 0 if there was none. */
  int deleteByName(String name);

  /**
   * Names of the targets registered over a minute ago by the database's clock, by name: younger
   * ones are still being started by the API.
   */
  @Query("select name from targets where created_at < now() - interval '1 minute' order by name")
  List<String> registeredOverAMinuteAgo();

  /**
   * Key of the transaction-scoped advisory lock that serialises capacity decisions (T2): counting
   * the free slots and taking one must be one decision.
   */
  long CAPACITY_LOCK = 0x4452_4950_4341_5001L;

  /** A pending target's place in line (T1, {@link TargetLine}), over the row {@code t}. */
  String PLACE = "greatest(t.waiting_since, coalesce(t.next_attempt_at, t.waiting_since))";

  /** Takes the capacity lock until the transaction ends, waiting for it if need be. */
  @Query("select 1 from pg_advisory_xact_lock(" + CAPACITY_LOCK + ")")
  int lockCapacity();

  /**
   * Stores a transition's state, streak, anchors, error, attempt times, current run and run to
   * retry, only while the row is still in state {@code expected} (compare-and-set). A target that
   * enters pending_backfill joins the end of the line ({@code waiting_since}); one that stays there
   * keeps its place.
   *
   * @return 0 if the row was not in {@code expected} state (or is gone): nothing was written
   */
  @Query(
      "update targets set state = :state, consecutive_failures = :consecutiveFailures,"
          + " first_failed_at = :firstFailedAt, last_error = :lastError,"
          + " last_attempt_at = :lastAttemptAt, next_attempt_at = :nextAttemptAt,"
          + " current_run_id = :currentRunId, retry_run_id = :retryRunId,"
          + " waiting_since = case when :state = 'pending_backfill'"
          + " and state <> 'pending_backfill' then now() else waiting_since end,"
          + " updated_at = now()"
          + " where name = :name and state = :expected")
  int write(
      String name,
      String expected,
      String state,
      int consecutiveFailures,
      @Nullable Instant firstFailedAt,
      @Nullable String lastError,
      @Nullable Instant lastAttemptAt,
      @Nullable Instant nextAttemptAt,
      @Nullable Long currentRunId,
      @Nullable Long retryRunId);

  /**
   * Stores {@code after} if the row is still in state {@code expected} ({@link #write(String,
   * String, String, int, Instant, String, Instant, Instant, Long, Long) write}).
   *
   * @return false if nothing was written
   */
  default boolean write(TargetState expected, TargetSnapshot after) {
    return write(
            after.name(),
            expected.wire(),
            after.state().wire(),
            after.consecutiveFailures(),
            after.firstFailedAt(),
            after.lastError(),
            after.lastAttemptAt(),
            after.nextAttemptAt(),
            after.currentRunId(),
            after.retryRunId())
        == 1;
  }

  /**
   * Starts a planning attempt: the target's capacity slot is taken for a new {@code attempt_id}.
   */
  @Query("update targets set attempt_id = nextval('target_attempts') where name = :name")
  int startAttempt(String name);

  /**
   * Sets the processed keys last observed of the target's current run; {@code null} keeps them. A
   * run that completed also stamps {@code primed_at}.
   */
  @Query(
      "update targets set observed_processed_keys = coalesce(:keys, observed_processed_keys),"
          + " primed_at = case when :primed then now() else primed_at end where name = :name")
  int observe(String name, @Nullable Long keys, boolean primed);

  /**
   * Measures forward progress from now on: the processed keys last observed become run {@code
   * runId}'s current count (a retried run's keys so far, T4).
   */
  @Query(
      "update targets set observed_processed_keys = (select "
          + ShardedCounters.PROCESSED_KEYS_OF_R
          + " from runs r where r.id = :runId) where name = :name")
  int observeFrom(String name, long runId);

  /** Targets backfilling now, per group (a {@code null} group for those without one). */
  @Query(
      "select group_name, count(*) as backfilling from targets where state = 'backfilling'"
          + " group by group_name")
  List<GroupLoad> backfillingPerGroup();

  /**
   * The eligible pending targets ahead of target {@code name} in line, head first (T1): the line's
   * order is {@link #PLACE}, then name.
   */
  @Query(
      "select t.name, t.group_name from targets t, targets me"
          + " where me.name = :name and t.state = 'pending_backfill' and t.name <> me.name"
          + " and "
          + PLACE
          + " <= now()"
          + " and ("
          + PLACE
          + ", t.name) < ("
          + "greatest(me.waiting_since, coalesce(me.next_attempt_at, me.waiting_since))"
          + ", me.name)"
          + " order by "
          + PLACE
          + ", t.name")
  List<LinePlace> aheadOf(String name);

  /** Every eligible pending target, head of the line first. */
  @Query(
      "select t.name, t.group_name from targets t where t.state = 'pending_backfill'"
          + " and "
          + PLACE
          + " <= now()"
          + " order by "
          + PLACE
          + ", t.name")
  List<LinePlace> line();

  // --- the metrics snapshot -----------------------------------------------------------------

  /**
   * SQL condition "target {@code t} is failing" (T6, as {@code FailureStreak.isFailing}): not
   * primed, and a streak of at least {@code :threshold} or needs_resync.
   */
  String FAILING =
      "(t.state <> 'primed' and (t.consecutive_failures >= :threshold"
          + " or t.state = 'needs_resync'))";

  /** Targets per state; absent states are absent. */
  @Query("select state as value, count(*) as count from targets group by state")
  List<GroupCount> countByState();

  /**
   * The failing targets ({@link #FAILING} with a streak of {@code threshold}) and the age of the
   * oldest streak, from the targets' state alone.
   */
  @Query(
      "select count(*) as stuck,"
          + " cast(coalesce(extract(epoch from now() - min(t.first_failed_at)), 0) as float8)"
          + " as age from targets t where "
          + FAILING)
  StuckTargets stuck(int threshold);
}

package dev.dripline.target;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.Page;
import io.micronaut.data.model.Pageable;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.List;
import java.util.Optional;

/**
 * Table {@code targets}. The API registers, replans and deletes targets; the target workflow's
 * activities move them through their states. Every change of state is a compare-and-set on the
 * state the caller read, under the row lock of {@link #lock}.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface TargetStore extends GenericRepository<TargetEntry, String> {
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
}

package dev.dripline.store.audit;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.Page;
import io.micronaut.data.model.Pageable;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;

/**
 * Table {@code audit_events} (O4): written by the app after each operator action and by a run's
 * workflow for a signal sent to it from Temporal; read newest first by {@code GET /api/audit}. Each
 * filter has its own statement, so that each reads its index ({@code audit_events_run_idx}, {@code
 * audit_events_target_idx}, the primary key) whatever plan PostgreSQL caches.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface AuditEventRepository extends GenericRepository<AuditEvent, Long> {
  /** The columns the API shows. */
  String EVENT =
      "select id, at, actor, action, run_id, target, subject, detail, outcome, status, problem,"
          + " dedup_key from audit_events";

  /**
   * Records an action; a second write with the same non-null {@code dedupKey} (a retried activity)
   * records nothing.
   */
  @Query(
      """
      insert into audit_events
          (actor, action, run_id, target, subject, detail, outcome, status, problem, dedup_key)
      values (:actor, :action, :runId, :target, :subject, :detail, :outcome, :status, :problem,
              :dedupKey)
      on conflict (dedup_key) do nothing
      """)
  void record(
      String actor,
      String action,
      @Nullable Long runId,
      @Nullable String target,
      @Nullable String subject,
      @Nullable String detail,
      String outcome,
      @Nullable Integer status,
      @Nullable String problem,
      @Nullable String dedupKey);

  /** A page of the whole trail, newest first. */
  @Query(value = EVENT + " order by id desc", countQuery = "select count(*) from audit_events")
  Page<AuditEvent> list(Pageable pageable);

  /** A page of the actions on run {@code runId}, newest first. */
  @Query(
      value = EVENT + " where run_id = :runId order by id desc",
      countQuery = "select count(*) from audit_events where run_id = :runId")
  Page<AuditEvent> listOfRun(long runId, Pageable pageable);

  /** A page of the actions on target {@code target}, newest first. */
  @Query(
      value = EVENT + " where target = :target order by id desc",
      countQuery = "select count(*) from audit_events where target = :target")
  Page<AuditEvent> listOfTarget(String target, Pageable pageable);

  /** A page of the actions on run {@code runId} of target {@code target}, newest first. */
  @Query(
      value = EVENT + " where run_id = :runId and target = :target order by id desc",
      countQuery = "select count(*) from audit_events where run_id = :runId and target = :target")
  Page<AuditEvent> listOfRunAndTarget(long runId, String target, Pageable pageable);
}

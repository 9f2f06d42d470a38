package dev.dripline.store.retention;

import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.time.Instant;
import java.util.List;

/**
 * What the purge (spec D5; docs/design.md "Retention and deletion") removes, a bounded chunk per
 * statement: the batches of deleted runs ({@code run_purges}), the batches of runs that ended
 * before the retention's cutoff, and the webhook events, deliveries and audit events older than it.
 * Each statement is its own short transaction (no caller joins one), takes at most {@code limit}
 * rows by an index, and answers how many it removed: 0 once nothing is left.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface PurgeRepository extends GenericRepository<RunPurge, Long> {
  /** Deleted runs whose batches are still to be purged, oldest deletion first. */
  @Query("select run_id from run_purges order by deleted_at, run_id limit :limit")
  List<Long> deletedRuns(int limit);

  /**
   * Deletes at most {@code limit} batches of deleted run {@code runId}, lowest numbers first (the
   * primary key's order); nothing if the run exists (run ids are never reused).
   */
  @Query(
      "delete from batches b where b.run_id = :runId and b.number = any (array (select n.number"
          + " from batches n where n.run_id = :runId"
          + " and not exists (select 1 from runs r where r.id = :runId)"
          + " order by n.number limit :limit))")
  int deleteBatchesOfDeletedRun(long runId, int limit);

  /** Forgets deleted run {@code runId} once it has no batch left; 0 if it still has one. */
  @Query(
      "delete from run_purges p where p.run_id = :runId"
          + " and not exists (select 1 from batches b where b.run_id = :runId)")
  int forgetDeletedRun(long runId);

  /**
   * Ended runs (completed, failed, stopped) that finished before {@code cutoff} and whose batches
   * are not purged yet, oldest end first ({@code runs_purge_due_idx}).
   */
  @Query(
      "select id from runs where batches_purged_at is null"
          + " and status in ('completed', 'failed', 'stopped') and finished_at < :cutoff"
          + " order by finished_at, id limit :limit")
  List<Long> runsEndedBefore(Instant cutoff, int limit);

  /**
   * Deletes at most {@code limit} batches of run {@code runId}, lowest numbers first, while the run
   * is still ended before {@code cutoff}: its row is locked for the statement's transaction, so a
   * retry that re-opens the run waits for the chunk, and a run re-opened meanwhile loses nothing.
   */
  @Query(
      "delete from batches b where b.run_id = (select r.id from runs r where r.id = :runId"
          + " and r.batches_purged_at is null and r.status in ('completed', 'failed', 'stopped')"
          + " and r.finished_at < :cutoff for update)"
          + " and b.number = any (array (select n.number from batches n where n.run_id = :runId"
          + " order by n.number limit :limit))")
  int deleteBatchesOfEndedRun(long runId, Instant cutoff, int limit);

  /**
   * Records that run {@code runId}'s batches are purged, while it is still ended before {@code
   * cutoff} and has no batch left; 0 otherwise.
   */
  @Query(
      "update runs r set batches_purged_at = now() where r.id = :runId"
          + " and r.batches_purged_at is null and r.status in ('completed', 'failed', 'stopped')"
          + " and r.finished_at < :cutoff"
          + " and not exists (select 1 from batches b where b.run_id = :runId)")
  int markBatchesPurged(long runId, Instant cutoff);

  /**
   * Deletes at most {@code limit} webhook deliveries of events created before {@code cutoff},
   * oldest event first ({@code webhook_events_created_idx}), before their events go.
   */
  @Query(
      "delete from webhook_deliveries d where d.id = any (array (select o.id"
          + " from webhook_events e join webhook_deliveries o on o.event_id = e.id"
          + " where e.created_at < :cutoff order by e.created_at limit :limit))")
  int deleteWebhookDeliveriesBefore(Instant cutoff, int limit);

  /**
   * Deletes at most {@code limit} webhook events created before {@code cutoff}, oldest first
   * ({@code webhook_events_created_idx}); their deliveries are gone already.
   */
  @Query(
      "delete from webhook_events e where e.id = any (array (select o.id from webhook_events o"
          + " where o.created_at < :cutoff order by o.created_at limit :limit))")
  int deleteWebhookEventsBefore(Instant cutoff, int limit);

  /**
   * Deletes at most {@code limit} audit events recorded before {@code cutoff}, oldest first ({@code
   * audit_events_at_idx}).
   */
  @Query(
      "delete from audit_events a where a.id = any (array (select o.id from audit_events o"
          + " where o.at < :cutoff order by o.at limit :limit))")
  int deleteAuditEventsBefore(Instant cutoff, int limit);
}

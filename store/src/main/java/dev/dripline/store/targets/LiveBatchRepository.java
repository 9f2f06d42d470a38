package dev.dripline.store.targets;

import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.Optional;

/**
 * Table {@code live_batches}: queued by the API, applied in id order by the target workflow's
 * activities once the target is primed. A batch leaves {@code queued} once, by a compare-and-set on
 * that status.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface LiveBatchRepository extends GenericRepository<LiveBatchEntry, Long> {

  /** A fresh live batch id, drawn ahead of {@link #queue} (ids give the arrival order). */
  @Query("select nextval(pg_get_serial_sequence('live_batches', 'id'))")
  long nextId();

  /**
   * Queues live batch {@code id} behind the target's others.
   *
   * @return 0 if there is no such target (nothing written), else 1
   */
  @Query(
      "insert into live_batches (id, target_name, payload, status)"
          + " select :id, name, cast(:payload as jsonb), 'queued' from targets where name = :target")
  int queue(long id, String target, String payload);

  /** How many of the target's live batches are queued ahead of live batch {@code id}. */
  @Query(
      "select count(*) from live_batches where target_name = :target and status = 'queued'"
          + " and id < :id")
  long queuedAhead(String target, long id);

  /** The target's first queued live batch (arrival order), if any. */
  @Query(
      "select id, cast(payload as text) as payload from live_batches"
          + " where target_name = :target and status = 'queued' order by id limit 1")
  Optional<LiveBatchPayload> findFirstQueued(String target);

  /** Marks a queued live batch applied; 0 if it was not queued (nothing written). */
  @Query(
      "update live_batches set status = 'applied', applied_at = now(), error = null"
          + " where id = :id and status = 'queued'")
  int markApplied(long id);

  /** Marks a queued live batch failed for good; 0 if it was not queued (nothing written). */
  @Query(
      "update live_batches set status = 'failed', error = :error where id = :id and status = 'queued'")
  int markFailed(long id, String error);

  /** Keeps the error of a failed attempt on a live batch that stays queued. */
  @Query("update live_batches set error = :error where id = :id and status = 'queued'")
  int recordError(long id, String error);

  /**
   * Queued live batches blocked behind targets that are not primed, apart by whether their target
   * is failing ({@link TargetRepository#FAILING} with a streak of {@code threshold}), with the age
   * of the oldest behind a healthy one. Reads {@code targets} too; it is here because what it
   * counts is live batches.
   */
  @Query(
      "select count(*) filter (where not "
          + TargetRepository.FAILING
          + ") as healthy,"
          + " cast(coalesce(extract(epoch from now() - min(l.created_at) filter (where not "
          + TargetRepository.FAILING
          + ")), 0) as float8) as healthy_age,"
          + " count(*) filter (where "
          + TargetRepository.FAILING
          + ") as failing"
          + " from live_batches l join targets t on t.name = l.target_name"
          + " where l.status = 'queued' and t.state <> 'primed'")
  BlockedBacklog blocked(int threshold);
}

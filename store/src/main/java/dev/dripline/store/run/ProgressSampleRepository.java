package dev.dripline.store.run;

import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Table {@code run_progress_samples} (migration V41): each running run's progress sampled once per
 * interval by the workers, for the dashboard's throughput chart over the run's whole life. Writing
 * costs one row per running run per interval; reading a chart costs one primary-key probe per edge
 * of its time axis, whatever the run's length or number of batches.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface ProgressSampleRepository
    extends GenericRepository<ProgressSample, ProgressSample.Key> {

  /**
   * The start of the sampling interval that holds {@code at}: a multiple of {@code interval} since
   * the epoch, so that every worker names the same interval alike.
   */
  static Instant intervalStart(Instant at, Duration interval) {
    long millis = Math.max(1, interval.toMillis());
    return Instant.ofEpochMilli(Math.floorDiv(at.toEpochMilli(), millis) * millis);
  }

  /**
   * Samples every running run's processed keys and completed batches (the sums of its {@code
   * run_key_counts} shards) as of the interval starting at {@code intervalStart}, in one statement.
   * A run sampled in that interval already, by this worker or another, keeps its sample; the rows
   * are inserted in run order, so two workers at once wait for each other's rows rather than
   * deadlock.
   *
   * @return the samples written
   */
  @Query(
      """
      insert into run_progress_samples (run_id, sampled_at, processed_keys, completed_batches)
      select r.id, cast(:intervalStart as timestamptz), k.processed_keys, k.completed_batches
        from runs r
        cross join lateral (
              select cast(coalesce(sum(c.processed_keys), 0) as bigint) as processed_keys,
                     cast(coalesce(sum(c.completed_batches), 0) as bigint) as completed_batches
                from run_key_counts c where c.run_id = r.id) k
       where r.status = 'running'
       order by r.id
      on conflict (run_id, sampled_at) do nothing
      """)
  int sample(Instant intervalStart);

  /**
   * Run {@code runId}'s progress at each of {@code edges} edges {@code first}, {@code first +
   * step}, …: per edge, its latest sample at or before it, read by one backward probe of the
   * primary key, so the rows read are at most {@code edges}, whatever the run's number of samples.
   */
  @Query(
      """
      select e.i as edge, s.processed_keys, s.completed_batches
        from generate_series(0, :edges - 1) e (i)
        left join lateral (
              select p.processed_keys, p.completed_batches from run_progress_samples p
               where p.run_id = :runId
                 and p.sampled_at <= cast(:first as timestamptz)
                                     + e.i * cast(:stepMillis as bigint) * interval '1 millisecond'
               order by p.sampled_at desc limit 1) s on true
       order by e.i
      """)
  List<ProgressAtEdge> atEdges(long runId, Instant first, long stepMillis, int edges);
}

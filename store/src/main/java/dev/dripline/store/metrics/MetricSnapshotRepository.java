package dev.dripline.store.metrics;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.List;

/**
 * Table {@code metric_snapshots}. The writer replaces the whole snapshot in one transaction ({@link
 * #lockForReplace}, {@link #deleteAll}, {@link #insert}), so a reader sees either the whole old or
 * the whole new one.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface MetricSnapshotRepository
    extends GenericRepository<MetricSnapshot, MetricSnapshot.Series> {

  /** Serialises writers until the end of the transaction: two cannot collide on the table's key. */
  @Query("select 1 from pg_advisory_xact_lock(:key)")
  int lockForReplace(long key);

  void deleteAll();

  /** Inserts one series with the transaction's {@code now()}. */
  @Query(
      "insert into metric_snapshots (name, labels, value, computed_at)"
          + " values (:name, :labels, :value, now())")
  void insert(String name, String labels, double value);

  /** A row as a reader takes it: with its age in seconds on PostgreSQL's clock. */
  @Introspected
  record Aged(String name, String labels, double value, double age) {}

  /** The whole snapshot, each row with its age. */
  @Query(
      "select name, labels, value, cast(extract(epoch from now() - computed_at) as float8) as age"
          + " from metric_snapshots")
  List<Aged> readAll();
}

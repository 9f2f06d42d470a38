package dev.dripline.app.run;

import dev.dripline.app.catalogue.StoredOptions;
import dev.dripline.db.Database;
import dev.dripline.db.DatabaseException;
import dev.dripline.db.ShardedCounters;
import dev.dripline.run.BatchStatus;
import dev.dripline.run.RunStatus;
import dev.dripline.run.RunWorkflowIds;
import jakarta.inject.Singleton;
import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.postgresql.util.PSQLException;

/**
 * SQL of the API over {@code runs} and {@code batches}. Writes are single compare-and-set
 * statements whose {@code where} clause is the guard, so two concurrent requests cannot both win.
 */
@Singleton
public class RunRepository {
  private static final String RUN_COLUMNS =
      "select id, backfill, options::text, batch_size, max_records,"
          + " requested_max_parallel_batches, max_parallel_batches, start_at, created_by, status,"
          + " error, workflow_id, total_keys, "
          + ShardedCounters.PROCESSED_KEYS_OF_R
          + " as processed_keys, created_at, updated_at, started_at, finished_at,"
          + " stop_requested_at is not null and status in ('running', 'paused') as stopping,"
          + " plan_done from runs r";
  private static final String BATCH_COLUMNS =
      "select number, start_key, end_key, size, status, attempts, error, started_at, finished_at"
          + " from batches";
  private static final String ACTIVE = "('pending', 'running', 'paused')";

  private final Database database;
  private final StoredOptions options;

  public RunRepository(Database database, StoredOptions options) {
    this.database = database;
    this.options = options;
  }

  /** What inserting a run came to. */
  sealed interface Insertion {
    /** The run was inserted with this id. */
    record Inserted(long id) implements Insertion {}

    /** An active run with the same backfill, options and maxRecords exists (R3). */
    record DuplicateActive() implements Insertion {}

    /** The idempotency key was taken by a concurrent request. */
    record DuplicateIdempotencyKey() implements Insertion {}
  }

  /** Inserts a pending run; its workflow id is derived from the id it is given. */
  Insertion insert(NewRun run) {
    try {
      return database.inTransaction(
          connection -> {
            long id;
            try (PreparedStatement next =
                    connection.prepareStatement(
                        "select nextval(pg_get_serial_sequence('runs', 'id'))");
                ResultSet rs = next.executeQuery()) {
              rs.next();
              id = rs.getLong(1);
            }
            try (PreparedStatement insert =
                connection.prepareStatement(
                    "insert into runs (id, backfill, options, options_key, batch_size, max_records,"
                        + " requested_max_parallel_batches, max_parallel_batches, start_at,"
                        + " created_by, status, idempotency_key, workflow_id)"
                        + " values (?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)")) {
              insert.setLong(1, id);
              insert.setString(2, run.backfill());
              insert.setString(3, run.optionsJson());
              insert.setString(4, run.optionsJson());
              insert.setInt(5, run.batchSize());
              setLong(insert, 6, run.maxRecords());
              setInt(insert, 7, run.requestedMaxParallelBatches());
              insert.setInt(8, run.maxParallelBatches());
              setInstant(insert, 9, run.startAt());
              insert.setString(10, run.createdBy());
              insert.setString(11, run.idempotencyKey());
              insert.setString(12, RunWorkflowIds.forRun(id));
              insert.executeUpdate();
            }
            return new Insertion.Inserted(id);
          });
    } catch (DatabaseException e) {
      if (!e.isUniqueViolation()) {
        throw e;
      }
      String constraint = constraint(e);
      if ("runs_one_active".equals(constraint)) {
        return new Insertion.DuplicateActive();
      }
      if (constraint != null && constraint.contains("idempotency_key")) {
        return new Insertion.DuplicateIdempotencyKey();
      }
      throw e;
    }
  }

  private static String constraint(DatabaseException e) {
    if (e.getCause() instanceof PSQLException psql && psql.getServerErrorMessage() != null) {
      return psql.getServerErrorMessage().getConstraint();
    }
    return null;
  }

  /** Removes a run whose workflow could not be started, so nothing is left half-written. */
  void deleteUnstarted(long id) {
    database.withConnection(
        connection -> {
          try (PreparedStatement delete =
              connection.prepareStatement("delete from runs where id = ? and status = 'pending'")) {
            delete.setLong(1, id);
            return delete.executeUpdate();
          }
        });
  }

  Optional<RunRow> find(long id) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
              connection.prepareStatement(RUN_COLUMNS + " where id = ?")) {
            select.setLong(1, id);
            return first(select);
          }
        });
  }

  Optional<RunRow> findByIdempotencyKey(String key) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
              connection.prepareStatement(RUN_COLUMNS + " where idempotency_key = ?")) {
            select.setString(1, key);
            return first(select);
          }
        });
  }

  /** The active run a new run with these values would duplicate (R3), if any. */
  Optional<Long> findActiveDuplicate(String backfill, String optionsKey, Long maxRecords) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
              connection.prepareStatement(
                  "select id from runs where backfill = ? and options_key = ?"
                      + " and coalesce(max_records, -1) = coalesce(?, -1) and status in "
                      + ACTIVE)) {
            select.setString(1, backfill);
            select.setString(2, optionsKey);
            setLong(select, 3, maxRecords);
            try (ResultSet rs = select.executeQuery()) {
              return rs.next() ? Optional.of(rs.getLong(1)) : Optional.empty();
            }
          }
        });
  }

  /** Runs newest first, optionally of one status and/or one backfill. */
  Page<RunRow> list(RunStatus status, String backfill, int page, int size) {
    String where = " where (?::text is null or status = ?) and (?::text is null or backfill = ?)";
    return database.withConnection(
        connection -> {
          List<RunRow> items = new ArrayList<>();
          try (PreparedStatement select =
              connection.prepareStatement(
                  RUN_COLUMNS + where + " order by id desc limit ? offset ?")) {
            bindFilter(select, status == null ? null : status.wire(), backfill);
            select.setInt(5, size);
            select.setLong(6, (long) page * size);
            try (ResultSet rs = select.executeQuery()) {
              while (rs.next()) {
                items.add(run(rs));
              }
            }
          }
          try (PreparedStatement count =
              connection.prepareStatement("select count(*) from runs" + where)) {
            bindFilter(count, status == null ? null : status.wire(), backfill);
            return new Page<>(items, single(count));
          }
        });
  }

  private static void bindFilter(PreparedStatement statement, String status, String backfill)
      throws SQLException {
    statement.setString(1, status);
    statement.setString(2, status);
    statement.setString(3, backfill);
    statement.setString(4, backfill);
  }

  /**
   * Batches per status of each of the given runs; absent statuses are absent. Completed batches
   * come from the run's counter ({@code run_key_counts}), the rest are counted by index: they are
   * few, while a run may have completed millions.
   *
   * <p>One index lookup per run and status, on both columns of {@code batches_run_status_idx}: with
   * {@code run_id = any (?) and status in (…)} the planner, while the statistics did not yet know a
   * new run's rows, scanned all of the run's entries and filtered the statuses (W3 in
   * docs/benchmarks.md: 46,788 heap fetches and 60 ms per GET 25 s into a run, until autoanalyze
   * changed the plan).
   */
  Map<Long, Map<BatchStatus, Long>> batchCounts(List<Long> runIds) {
    if (runIds.isEmpty()) {
      return Map.of();
    }
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
              connection.prepareStatement(
                  "select r.id, s.status, c.n from unnest(?::bigint[]) r (id)"
                      + " cross join unnest(array['pending', 'enqueued', 'running', 'failed',"
                      + " 'stopped']) s (status)"
                      + " cross join lateral (select count(*) as n from batches b"
                      + " where b.run_id = r.id and b.status = s.status) c"
                      + " where c.n > 0"
                      + " union all"
                      + " select run_id, 'completed', sum(completed_batches)::bigint"
                      + " from run_key_counts where run_id = any (?)"
                      + " group by run_id having sum(completed_batches) > 0")) {
            Array ids = connection.createArrayOf("bigint", runIds.toArray());
            select.setArray(1, ids);
            select.setArray(2, ids);
            Map<Long, Map<BatchStatus, Long>> counts = new HashMap<>();
            try (ResultSet rs = select.executeQuery()) {
              while (rs.next()) {
                counts
                    .computeIfAbsent(rs.getLong(1), id -> new EnumMap<>(BatchStatus.class))
                    .put(BatchStatus.fromWire(rs.getString(2)), rs.getLong(3));
              }
            }
            return counts;
          }
        });
  }

  /** A run's batches in number order, optionally of one status. */
  Page<BatchRow> batches(long runId, BatchStatus status, int page, int size) {
    String where = " where run_id = ? and (?::text is null or status = ?)";
    String wire = status == null ? null : status.wire();
    return database.withConnection(
        connection -> {
          List<BatchRow> items = new ArrayList<>();
          try (PreparedStatement select =
              connection.prepareStatement(
                  BATCH_COLUMNS + where + " order by number limit ? offset ?")) {
            select.setLong(1, runId);
            select.setString(2, wire);
            select.setString(3, wire);
            select.setInt(4, size);
            select.setLong(5, (long) page * size);
            try (ResultSet rs = select.executeQuery()) {
              while (rs.next()) {
                items.add(batch(rs));
              }
            }
          }
          try (PreparedStatement count =
              connection.prepareStatement("select count(*) from batches" + where)) {
            count.setLong(1, runId);
            count.setString(2, wire);
            count.setString(3, wire);
            return new Page<>(items, single(count));
          }
        });
  }

  /** Deletes a pending or terminal run and (by cascade) its batches; false if none was. */
  boolean deleteIfDeletable(long id) {
    return update(
        "delete from runs where id = ? and status in ('pending', 'completed', 'failed', 'stopped')",
        id);
  }

  private boolean update(String sql, long id) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement update = connection.prepareStatement(sql)) {
            update.setLong(1, id);
            return update.executeUpdate() == 1;
          }
        });
  }

  private Optional<RunRow> first(PreparedStatement select) throws SQLException {
    try (ResultSet rs = select.executeQuery()) {
      return rs.next() ? Optional.of(run(rs)) : Optional.empty();
    }
  }

  private static long single(PreparedStatement count) throws SQLException {
    try (ResultSet rs = count.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private RunRow run(ResultSet rs) throws SQLException {
    return new RunRow(
        rs.getLong(1),
        rs.getString(2),
        options.read(rs.getString(3), "run " + rs.getLong(1)),
        rs.getInt(4),
        nullableLong(rs, 5),
        nullableInt(rs, 6),
        rs.getInt(7),
        instant(rs, 8),
        rs.getString(9),
        RunStatus.fromWire(rs.getString(10)),
        rs.getString(11),
        rs.getString(12),
        nullableLong(rs, 13),
        rs.getLong(14),
        instant(rs, 15),
        instant(rs, 16),
        instant(rs, 17),
        instant(rs, 18),
        rs.getBoolean(19),
        rs.getBoolean(20));
  }

  private static BatchRow batch(ResultSet rs) throws SQLException {
    return new BatchRow(
        rs.getInt(1),
        rs.getLong(2),
        rs.getLong(3),
        rs.getInt(4),
        BatchStatus.fromWire(rs.getString(5)),
        rs.getInt(6),
        rs.getString(7),
        instant(rs, 8),
        instant(rs, 9));
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
    return value == null ? null : value.toInstant();
  }

  private static Long nullableLong(ResultSet rs, int column) throws SQLException {
    long value = rs.getLong(column);
    return rs.wasNull() ? null : value;
  }

  private static Integer nullableInt(ResultSet rs, int column) throws SQLException {
    int value = rs.getInt(column);
    return rs.wasNull() ? null : value;
  }

  private static void setLong(PreparedStatement statement, int index, Long value)
      throws SQLException {
    if (value == null) {
      statement.setNull(index, Types.BIGINT);
    } else {
      statement.setLong(index, value);
    }
  }

  private static void setInt(PreparedStatement statement, int index, Integer value)
      throws SQLException {
    if (value == null) {
      statement.setNull(index, Types.INTEGER);
    } else {
      statement.setInt(index, value);
    }
  }

  private static void setInstant(PreparedStatement statement, int index, Instant value)
      throws SQLException {
    if (value == null) {
      statement.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
    } else {
      statement.setObject(index, value.atOffset(ZoneOffset.UTC));
    }
  }
}

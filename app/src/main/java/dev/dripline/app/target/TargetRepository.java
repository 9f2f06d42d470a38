package dev.dripline.app.target;

import dev.dripline.app.run.Page;
import dev.dripline.db.Database;
import dev.dripline.target.ReplanResult;
import dev.dripline.target.TargetReplan;
import dev.dripline.target.TargetRunStops;
import dev.dripline.target.TargetState;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * SQL of the API over {@code targets} and {@code live_batches}. The target workflow changes the
 * same rows; every write here is one statement or one transaction whose guard is in SQL.
 */
@Singleton
public class TargetRepository {
  /** A target with its queue of live batches; ages are measured by the database's clock. */
  private static final String TARGET_COLUMNS =
      "select t.name, t.backfill, t.options::text, t.group_name, t.state,"
          + " t.consecutive_failures, t.first_failed_at, t.last_attempt_at, t.next_attempt_at,"
          + " t.last_error, t.current_run_id, t.created_at, t.updated_at, q.queued,"
          + " floor(extract(epoch from now() - q.oldest))::bigint"
          + " from targets t left join lateral (select count(*) as queued,"
          + " min(l.created_at) as oldest from live_batches l"
          + " where l.target_name = t.name and l.status = 'queued') q on true";

  /** Unqualified columns here are the target's: the joined queue has only its two figures. */
  private static final String FILTER =
      " where (?::text is null or state = ?) and (?::text is null or group_name = ?)";

  private static final Argument<Map<String, Object>> OPTIONS =
      Argument.mapOf(String.class, Object.class);

  private final Database database;
  private final JsonMapper json;

  public TargetRepository(Database database, JsonMapper json) {
    this.database = database;
    this.json = json;
  }

  /** A live batch just queued. */
  record QueuedLiveBatch(long id, long queuedAhead) {}

  /**
   * A target just deleted.
   *
   * @param currentRunId its run, or {@code null}
   * @param stopping its running or paused runs, whose recorded stop is still to be delivered
   */
  record DeletedTarget(Long currentRunId, List<TargetRunStops.RunToStop> stopping) {}

  /**
   * Registers a target in {@code pending_backfill} with an empty streak (spec T1).
   *
   * @return false if a target of that name exists
   */
  boolean insert(NewTarget target) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "insert into targets (name, backfill, options, group_name, state,"
                      + " consecutive_failures) values (?, ?, ?::jsonb, ?, 'pending_backfill', 0)"
                      + " on conflict (name) do nothing")) {
            insert.setString(1, target.name());
            insert.setString(2, target.backfill());
            insert.setString(3, target.optionsJson());
            insert.setString(4, target.group());
            return insert.executeUpdate() == 1;
          }
        });
  }

  /** Removes a target whose workflow could not be started, so nothing is left half-written. */
  void deleteUnstarted(String name) {
    database.withConnection(
        connection -> {
          try (PreparedStatement delete =
              connection.prepareStatement(
                  "delete from targets where name = ? and state = 'pending_backfill'"
                      + " and current_run_id is null")) {
            delete.setString(1, name);
            return delete.executeUpdate();
          }
        });
  }

  Optional<TargetRow> find(String name) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select =
              connection.prepareStatement(TARGET_COLUMNS + " where t.name = ?")) {
            select.setString(1, name);
            try (ResultSet rs = select.executeQuery()) {
              return rs.next() ? Optional.of(target(rs)) : Optional.empty();
            }
          }
        });
  }

  /** Targets by name, optionally of one state and/or one group. */
  Page<TargetRow> list(TargetState state, String group, int page, int size) {
    String wire = state == null ? null : state.wire();
    return database.withConnection(
        connection -> {
          List<TargetRow> items = new ArrayList<>();
          try (PreparedStatement select =
              connection.prepareStatement(
                  TARGET_COLUMNS + FILTER + " order by t.name limit ? offset ?")) {
            bindFilter(select, wire, group);
            select.setInt(5, size);
            select.setLong(6, (long) page * size);
            try (ResultSet rs = select.executeQuery()) {
              while (rs.next()) {
                items.add(target(rs));
              }
            }
          }
          try (PreparedStatement count =
              connection.prepareStatement("select count(*) from targets" + FILTER)) {
            bindFilter(count, wire, group);
            try (ResultSet rs = count.executeQuery()) {
              rs.next();
              return new Page<>(items, rs.getLong(1));
            }
          }
        });
  }

  /**
   * Queues a live batch behind the target's others.
   *
   * @return empty if the target does not exist
   */
  Optional<QueuedLiveBatch> queueLiveBatch(String name, String payloadJson) {
    return database.inTransaction(
        connection -> {
          long id;
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "insert into live_batches (target_name, payload, status)"
                      + " select name, ?::jsonb, 'queued' from targets where name = ?"
                      + " returning id")) {
            insert.setString(1, payloadJson);
            insert.setString(2, name);
            try (ResultSet rs = insert.executeQuery()) {
              if (!rs.next()) {
                return Optional.empty();
              }
              id = rs.getLong(1);
            }
          }
          try (PreparedStatement ahead =
              connection.prepareStatement(
                  "select count(*) from live_batches"
                      + " where target_name = ? and status = 'queued' and id < ?")) {
            ahead.setString(1, name);
            ahead.setLong(2, id);
            try (ResultSet rs = ahead.executeQuery()) {
              rs.next();
              return Optional.of(new QueuedLiveBatch(id, rs.getLong(1)));
            }
          }
        });
  }

  /**
   * What an operator replan (spec T7) would do, through core's {@link TargetReplan}; rolled back,
   * so it changes nothing even if the shared code were to write.
   */
  ReplanResult previewReplan(String name) {
    return database.inTransaction(
        connection -> {
          ReplanResult result = TargetReplan.replan(connection, name, true);
          connection.rollback();
          return result;
        });
  }

  /**
   * Operator replan (spec T7) through core's {@link TargetReplan}, the one implementation the
   * workflow's {@code replan} signal uses too: the target is reset and its runs are stopped in
   * their records in one transaction.
   */
  TargetReplan.Replanned replan(String name) {
    return database.inTransaction(connection -> TargetReplan.replanAndStopRuns(connection, name));
  }

  /**
   * Deletes a target and (by cascade) its live batches, and stops its runs in their records in the
   * same transaction ({@link TargetRunStops}): a pending run ends stopped, a running or paused one
   * has its stop recorded. So nothing revives them and no later target of the same name adopts
   * them.
   *
   * @return empty if there was no such target
   */
  Optional<DeletedTarget> delete(String name) {
    return database.inTransaction(
        connection -> {
          Long currentRunId;
          try (PreparedStatement delete =
              connection.prepareStatement(
                  "delete from targets where name = ? returning current_run_id")) {
            delete.setString(1, name);
            try (ResultSet rs = delete.executeQuery()) {
              if (!rs.next()) {
                return Optional.empty();
              }
              long runId = rs.getLong(1);
              currentRunId = rs.wasNull() ? null : runId;
            }
          }
          return Optional.of(
              new DeletedTarget(
                  currentRunId,
                  TargetRunStops.stopActiveRuns(connection, name, currentRunId, null)));
        });
  }

  private static void bindFilter(PreparedStatement statement, String state, String group)
      throws SQLException {
    statement.setString(1, state);
    statement.setString(2, state);
    statement.setString(3, group);
    statement.setString(4, group);
  }

  private TargetRow target(ResultSet rs) throws SQLException {
    long runId = rs.getLong(11);
    Long currentRunId = rs.wasNull() ? null : runId;
    long age = rs.getLong(15);
    Long oldestAge = rs.wasNull() ? null : Math.max(0, age);
    return new TargetRow(
        rs.getString(1),
        rs.getString(2),
        options(rs.getString(3)),
        rs.getString(4),
        TargetState.fromWire(rs.getString(5)),
        rs.getInt(6),
        instant(rs, 7),
        instant(rs, 8),
        instant(rs, 9),
        rs.getString(10),
        currentRunId,
        instant(rs, 12),
        instant(rs, 13),
        rs.getLong(14),
        oldestAge);
  }

  private Map<String, Object> options(String text) {
    try {
      Map<String, Object> values = json.readValue(text, OPTIONS);
      return values == null ? Map.of() : new TreeMap<>(values);
    } catch (IOException e) {
      throw new UncheckedIOException("unreadable options of a target", e);
    }
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
    return value == null ? null : value.toInstant();
  }
}

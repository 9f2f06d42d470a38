package dev.dripline.activities.testing;

import dev.dripline.spi.Key;
import dev.dripline.store.db.Database;
import dev.dripline.store.db.ShardedCounters;
import dev.dripline.store.keys.KeyCodec;
import jakarta.inject.Singleton;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/** Inserts and inspects runs and batches for tests; deletes every run it created. */
@Singleton
public class RunFixtures {
  private final Database database;
  private final List<Long> created = new CopyOnWriteArrayList<>();

  public RunFixtures(Database database) {
    this.database = database;
  }

  /** A run of {@link KeysBackfill} with the given options JSON. */
  public long run(String status, String optionsJson, int batchSize, Long maxRecords) {
    return run(KeysBackfill.NAME, status, optionsJson, batchSize, maxRecords);
  }

  /** A run of {@code backfill} with the given options JSON. */
  public long run(
      String backfill, String status, String optionsJson, int batchSize, Long maxRecords) {
    long id =
        database.inTransaction(
            connection -> {
              try (PreparedStatement insert =
                  connection.prepareStatement(
                      "insert into runs (backfill, options, options_key, batch_size, max_records,"
                          + " max_parallel_batches, status, started_at)"
                          + " values (?, ?::jsonb, ?, ?, ?, 5, ?,"
                          + " case when ? = 'pending' then null else now() end) returning id")) {
                insert.setString(1, backfill);
                insert.setString(2, optionsJson);
                // Unique so that the one-active-run index never couples tests.
                insert.setString(3, UUID.randomUUID().toString());
                insert.setInt(4, batchSize);
                if (maxRecords == null) {
                  insert.setNull(5, Types.BIGINT);
                } else {
                  insert.setLong(5, maxRecords);
                }
                insert.setString(6, status);
                insert.setString(7, status);
                try (ResultSet rs = insert.executeQuery()) {
                  rs.next();
                  return rs.getLong(1);
                }
              }
            });
    created.add(id);
    return id;
  }

  public long runningRun(long items, int batchSize) {
    return run("running", "{\"items\":" + items + "}", batchSize, null);
  }

  /** Adds batches {@code 1..count} of {@code size} keys each, in the given status. */
  public void batches(long runId, int count, int size, String status) {
    database.inTransaction(
        connection -> {
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size,"
                      + " status) values (?, ?, dripline_bigint_key(?), dripline_bigint_key(?),"
                      + " ?, ?)")) {
            for (int n = 1; n <= count; n++) {
              insert.setLong(1, runId);
              insert.setInt(2, n);
              insert.setLong(3, (long) (n - 1) * size + 1);
              insert.setLong(4, (long) n * size);
              insert.setInt(5, size);
              insert.setString(6, status);
              insert.addBatch();
            }
            return insert.executeBatch();
          }
        });
  }

  public void setBatchStatus(long runId, int number, String status) {
    update("update batches set status = ? where run_id = ? and number = ?", status, runId, number);
  }

  public void setRunStatus(long runId, String status) {
    update("update runs set status = ? where id = ?", status, runId);
  }

  public void markPlanned(long runId, long keys) {
    update(
        "update runs set plan_done = true, planned_keys = ?, plan_cursor_key ="
            + " dripline_bigint_key(?) where id = ?",
        keys,
        keys,
        runId);
  }

  /** A change to the schema a test made, undone by {@link #close()}. */
  public interface Undo extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Makes the {@code nth} record of a batch's keys in {@code run_key_counts} from now on — the
   * counters' update in a batch's completion — fail as a deadlock's victim (SQLSTATE 40P01), until
   * closed. The holders' writes to the same rows (migration V25) are not counted.
   */
  public Undo deadlockCounterRecord(int nth) {
    update("create sequence test_counter_records");
    update(
        "create function test_counter_deadlock() returns trigger language plpgsql as $$"
            + " begin if tg_op = 'UPDATE' and new.completed_batches = old.completed_batches"
            + " then return new; end if;"
            + " if nextval('test_counter_records') = "
            + nth
            + " then raise exception 'deadlock detected (test)' using errcode = '40P01'; end if;"
            + " return new; end $$");
    update(
        "create trigger test_counter_deadlock before insert or update on run_key_counts"
            + " for each row execute function test_counter_deadlock()");
    return () -> {
      update("drop trigger test_counter_deadlock on run_key_counts");
      update("drop function test_counter_deadlock()");
      update("drop sequence test_counter_records");
    };
  }

  public void update(String sql, Object... parameters) {
    database.inTransaction(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
              statement.setObject(i + 1, parameters[i]);
            }
            return statement.executeUpdate();
          }
        });
  }

  /** Single-row query as a column-name map, or null. */
  public Map<String, Object> row(String sql, Object... parameters) {
    List<Map<String, Object>> rows = rows(sql, parameters);
    return rows.isEmpty() ? null : rows.get(0);
  }

  public List<Map<String, Object>> rows(String sql, Object... parameters) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
              statement.setObject(i + 1, parameters[i]);
            }
            try (ResultSet rs = statement.executeQuery()) {
              List<Map<String, Object>> result = new ArrayList<>();
              int columns = rs.getMetaData().getColumnCount();
              while (rs.next()) {
                Map<String, Object> row = new java.util.LinkedHashMap<>();
                for (int c = 1; c <= columns; c++) {
                  row.put(rs.getMetaData().getColumnLabel(c), rs.getObject(c));
                }
                result.add(row);
              }
              return result;
            }
          }
        });
  }

  /**
   * The run's row, with its processed keys summed from their shards as {@code processed_keys} and
   * its planning cursor, a {@code long} key, as {@code plan_cursor}.
   */
  public Map<String, Object> runRow(long runId) {
    Map<String, Object> row =
        row(
            "select r.*, "
                + ShardedCounters.PROCESSED_KEYS_OF_R
                + " as processed_keys"
                + " from runs r where r.id = ?",
            runId);
    row.put("plan_cursor", longKey(row.get("plan_cursor_key")));
    return row;
  }

  /**
   * The run's batches by number, their {@code long} keys as {@code start_key} and {@code end_key}.
   */
  public List<Map<String, Object>> batchRows(long runId) {
    List<Map<String, Object>> rows =
        rows("select * from batches where run_id = ? order by number", runId);
    for (Map<String, Object> row : rows) {
      row.put("start_key", longKey(row.get("start_key_bytes")));
      row.put("end_key", longKey(row.get("end_key_bytes")));
    }
    return rows;
  }

  /** The value of a {@code long} key's bytes ({@link KeyCodec}), or null for any other key. */
  private static Long longKey(Object bytes) {
    if (bytes == null) {
      return null;
    }
    Key key = KeyCodec.decode((byte[]) bytes);
    return key.size() == 1 && key.get(0) instanceof Long value ? value : null;
  }

  /** Batch statuses in number order. */
  public List<String> batchStatuses(long runId) {
    return batchRows(runId).stream().map(row -> (String) row.get("status")).toList();
  }

  public void deleteCreated() {
    for (Long id : created) {
      update("delete from runs where id = ?", id);
    }
    created.clear();
  }
}

package dev.dripline.app;

import dev.dripline.spi.Key;
import dev.dripline.store.db.Database;
import dev.dripline.store.keys.KeyCodec;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.UUID;

/**
 * Rows the ITs arrange directly in PostgreSQL. Every test uses its own backfill names (other
 * modules' tests may share the database), and cleans up only what it made.
 */
public final class TestData {
  /**
   * The schema of a test definition: {@code items} (integer, required, ≥ 0), {@code sleepMs}
   * (integer, default 0), {@code faultTag} (string, optional), {@code mode} (enum fast/slow,
   * default fast), {@code from} and {@code to} (dates, optional; {@code to} not before {@code
   * from}).
   */
  public static final String SCHEMA =
      """
      [{"name":"items","type":"integer","required":true,"min":0,"description":"keys 1..items"},
       {"name":"sleepMs","type":"integer","required":false,"defaultValue":0},
       {"name":"faultTag","type":"string","required":false},
       {"name":"mode","type":"enum","required":false,"defaultValue":"fast",
        "allowedValues":["fast","slow"]},
       {"name":"from","type":"date","required":false},
       {"name":"to","type":"date","required":false,"notBefore":"from"}]
      """;

  private final Database database;

  public TestData(Database database) {
    this.database = database;
  }

  /** A fresh, unique backfill name. */
  public static String uniqueName() {
    return "apptest." + UUID.randomUUID().toString().substring(0, 8);
  }

  public void definition(String name, int defaultBatchSize, Integer maxParallelBatches) {
    sql(
        "insert into backfill_definitions (name, description, options_schema, default_batch_size,"
            + " max_parallel_batches) values (?, 'a test definition', ?::jsonb, ?, ?)",
        name,
        SCHEMA,
        defaultBatchSize,
        maxParallelBatches);
  }

  /** A definition whose key is {@code keyJson} ({@code [{name, type}]}). */
  public void definition(String name, String keyJson) {
    sql(
        "insert into backfill_definitions (name, description, options_schema, default_batch_size,"
            + " max_parallel_batches, key) values (?, 'a test definition', ?::jsonb, 10, null,"
            + " ?::jsonb)",
        name,
        SCHEMA,
        keyJson);
  }

  /**
   * A table definition whose key is {@code keyJson} ({@code [{name, type}]}), listed from table
   * {@code keyTable}.
   */
  public void tableDefinition(String name, String keyJson, String keyTable) {
    sql(
        "insert into backfill_definitions (name, description, options_schema, default_batch_size,"
            + " max_parallel_batches, key, key_table) values (?, 'a test definition', ?::jsonb,"
            + " 10, null, ?::jsonb, ?)",
        name,
        SCHEMA,
        keyJson,
        keyTable);
  }

  /** Inserts a pending batch with keys of any type, as the engine writes them. */
  public void batch(long runId, int number, Key startKey, Key endKey, int size) {
    sql(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status)"
            + " values (?, ?, ?, ?, ?, 'pending')",
        runId,
        number,
        KeyCodec.encode(startKey),
        KeyCodec.encode(endKey),
        size);
  }

  /** Inserts a run of {@code backfill} in {@code status}; returns its id. */
  public long run(String backfill, String status, String optionsJson) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "insert into runs (backfill, options, options_key, batch_size,"
                      + " max_parallel_batches, created_by, status, started_at, finished_at)"
                      + " values (?, ?::jsonb, ?, 10, 3, 'test', ?,"
                      + " case when ? <> 'pending' then now() end,"
                      + " case when ? in ('completed', 'failed', 'stopped') then now() end)"
                      + " returning id")) {
            insert.setString(1, backfill);
            insert.setString(2, optionsJson);
            insert.setString(3, optionsJson);
            insert.setString(4, status);
            insert.setString(5, status);
            insert.setString(6, status);
            try (ResultSet rs = insert.executeQuery()) {
              rs.next();
              long id = rs.getLong(1);
              sql("update runs set workflow_id = 'dripline-run-' || id where id = ?", id);
              return id;
            }
          }
        });
  }

  /**
   * Inserts a batch; a completed one is counted in its run's completed batches, as the engine does.
   */
  public void batch(long runId, int number, long startKey, long endKey, String status) {
    sql(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status)"
            + " values (?, ?, dripline_bigint_key(?), dripline_bigint_key(?), ?, ?)",
        runId,
        number,
        startKey,
        endKey,
        (int) (endKey - startKey + 1),
        status);
    if (status.equals("completed")) {
      sql(
          "insert into run_key_counts (run_id, shard, completed_batches) values (?, 15, 1)"
              + " on conflict (run_id, shard)"
              + " do update set completed_batches = run_key_counts.completed_batches + 1",
          runId);
    }
  }

  /**
   * Inserts batches 1, 2, … of ten keys each (1–10, 11–20, …) with these statuses, as {@link
   * #batch}.
   */
  public void batches(long runId, String... statuses) {
    for (int i = 0; i < statuses.length; i++) {
      batch(runId, i + 1, 10L * i + 1, 10L * (i + 1), statuses[i]);
    }
  }

  public long count(String sql, Object... args) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select = connection.prepareStatement(sql)) {
            bind(select, args);
            try (ResultSet rs = select.executeQuery()) {
              rs.next();
              return rs.getLong(1);
            }
          }
        });
  }

  public String text(String sql, Object... args) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement select = connection.prepareStatement(sql)) {
            bind(select, args);
            try (ResultSet rs = select.executeQuery()) {
              return rs.next() ? rs.getString(1) : null;
            }
          }
        });
  }

  public int sql(String sql, Object... args) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            bind(statement, args);
            return statement.executeUpdate();
          }
        });
  }

  /** A fresh, unique target name. */
  public static String uniqueTarget() {
    return "apptest-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Inserts a target of {@code backfill} in {@code state} with a streak of {@code failures}. */
  public void target(String name, String backfill, String state, int failures) {
    sql(
        "insert into targets (name, backfill, options, state, consecutive_failures)"
            + " values (?, ?, '{\"items\":5,\"mode\":\"fast\",\"sleepMs\":0}'::jsonb, ?, ?)",
        name,
        backfill,
        state,
        failures);
  }

  /** Queues a live batch for {@code target} that arrived {@code secondsAgo}; returns its id. */
  public long liveBatch(String target, String status, int secondsAgo) {
    return count(
        "insert into live_batches (target_name, payload, status, created_at)"
            + " values (?, '{\"n\":1}'::jsonb, ?, now() - make_interval(secs => ?)) returning id",
        target,
        status,
        secondsAgo);
  }

  /** Removes the given targets and (by cascade) their live batches. */
  public void cleanUpTargets(String... names) {
    for (String name : names) {
      sql("delete from targets where name = ?", name);
    }
  }

  /** Removes the definitions and runs (with their batches) of the given backfills. */
  public void cleanUp(String... backfills) {
    for (String name : backfills) {
      sql("delete from runs where backfill = ?", name);
      sql("delete from backfill_definitions where name = ?", name);
    }
  }

  private static void bind(PreparedStatement statement, Object... args)
      throws java.sql.SQLException {
    for (int i = 0; i < args.length; i++) {
      statement.setObject(i + 1, args[i]);
    }
  }

  /** Whether something listens at {@code host:port}; tests needing Temporal skip otherwise. */
  public static boolean reachable(String address) {
    int colon = address.lastIndexOf(':');
    try (Socket socket = new Socket()) {
      socket.connect(
          new InetSocketAddress(
              address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))),
          500);
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  /** The body of {@code POST /api/targets} for a test definition with {@code items} keys. */
  public static String targetBody(String name, String backfill, int items) {
    return "{\"name\":\""
        + name
        + "\",\"backfill\":\""
        + backfill
        + "\",\"options\":{\"items\":"
        + items
        + "}}";
  }
}

package dev.dripline.store.migration;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.flywaydb.core.api.MigrationVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The contract step of typed keys (K2; migration V13 was the expand step): gives the key bytes to
 * every batch and planning cursor that the release before typed keys left as a bigint only, so that
 * migration V42 can require the bytes of every batch and V43 validate that, and this release's
 * readers need no bigint.
 *
 * <p>It runs in the migrate step ({@link #migrate}), between two passes of Flyway: the first brings
 * the schema to {@link #EXPANDED} (a database already there is left as it is), then the fill, then
 * the rest. So the bytes are filled before the constraint exists (which would refuse an update of
 * an unfilled row by the release still serving) and before this release's code serves: a process
 * migrates before any bean uses the database, and one that does not migrate waits for the schema,
 * which reaches this release's version only after the fill. The release running beside this one
 * writes the bytes of every batch it plans, so no unfilled row appears after the fill.
 *
 * <p>The fill is no migration: each chunk of {@link MigrationConfig#fillChunkRows()} rows, walked
 * in primary key order, is one short transaction of its own (autocommit) that locks only the rows
 * it fills, under the migrations' {@code lock_timeout}; a chunk that fails for a passing reason is
 * tried again from where it stopped. It only fills what is missing, so a fill killed half-way is
 * run again from the start by the next migrate step, and skipped as a whole once V43 validated the
 * constraint. A session advisory lock keeps processes migrating at once from filling side by side:
 * one fills and migrates, the others wait and then find the constraint validated.
 */
final class TypedKeysFill {
  /** The schema the fill needs: the last version before the contract's migrations. */
  static final MigrationVersion EXPANDED = MigrationVersion.fromVersion("41");

  /** The constraint that requires the bytes (V42, validated by V43). */
  static final String CONSTRAINT = "batches_key_bytes_present";

  private static final Logger LOG = LoggerFactory.getLogger(TypedKeysFill.class);

  /** The key of the session advisory lock held while a process fills and migrates. */
  private static final long LOCK_KEY = 0x4452_4950_4b32L;

  private static final long LOCK_POLL_INITIAL_MILLIS = 50;
  private static final long LOCK_POLL_MAX_MILLIS = 1000;

  /** One chunk of batches: fills what lacks bytes, returns the chunk's last key and the count. */
  private static final String FILL_BATCHES =
      "with chunk as (select run_id, number from batches"
          + " where (run_id, number) > (?, ?) order by run_id, number limit ?),"
          + " filled as (update batches b"
          + " set start_key_bytes = coalesce(b.start_key_bytes, dripline_bigint_key(b.start_key)),"
          + " end_key_bytes = coalesce(b.end_key_bytes, dripline_bigint_key(b.end_key))"
          + " from chunk c where b.run_id = c.run_id and b.number = c.number"
          + " and (b.start_key_bytes is null or b.end_key_bytes is null) returning 1)"
          + " select run_id, number, (select count(*) from filled) from chunk"
          + " order by run_id desc, number desc limit 1";

  /**
   * One chunk of runs: the cursor's bytes where only the bigint holds it, or where the bigint was
   * written after the bytes (the release before typed keys planned a page since).
   */
  private static final String FILL_RUNS =
      "with chunk as (select id from runs where id > ? order by id limit ?),"
          + " filled as (update runs r set plan_cursor_key = dripline_bigint_key(r.plan_cursor)"
          + " from chunk c where r.id = c.id and r.plan_cursor is not null"
          + " and r.plan_cursor_key is distinct from dripline_bigint_key(r.plan_cursor)"
          + " returning 1)"
          + " select id, (select count(*) from filled) from chunk order by id desc limit 1";

  /** What a fill did: rows given their bytes, chunks walked, and how long it took. */
  record Filled(long batches, long runs, long chunks, Duration took, boolean skipped) {
    @Override
    public String toString() {
      return skipped
          ? "nothing to fill (" + CONSTRAINT + " is validated)"
          : String.format(
              "filled the key bytes of %d batches and %d run cursors in %d chunks, %d ms",
              batches, runs, chunks, took.toMillis());
    }
  }

  /** Where a fill is: the last primary key done per table; kept across tries of a chunk. */
  private static final class Position {
    long runId = Long.MIN_VALUE;
    int number = Integer.MIN_VALUE;
    boolean batchesDone;
    long id = Long.MIN_VALUE;
    boolean runsDone;
    long batches;
    long runs;
    long chunks;
  }

  private TypedKeysFill() {}

  /**
   * Migrates {@code dataSource} with the fill between Flyway's two passes: {@code migrateTo}
   * applies the migrations up to the version it is given, or all of them for null, retrying as
   * migrations are ({@link SchemaMigration#untilDone}). Returns what the fill did.
   */
  static Filled migrate(
      DataSource dataSource, MigrationConfig config, Consumer<MigrationVersion> migrateTo) {
    Connection[] lock = new Connection[1];
    SchemaMigration.untilDone(() -> lock[0] = lock(dataSource), () -> {}, config);
    try {
      migrateTo.accept(EXPANDED);
      Filled filled = fill(dataSource, config);
      LOG.info("Typed keys: {}", filled);
      migrateTo.accept(null);
      return filled;
    } finally {
      unlock(lock[0]);
    }
  }

  /** Fills every batch and run cursor that lacks its bytes, unless V43 validated the constraint. */
  static Filled fill(DataSource dataSource, MigrationConfig config) {
    if (config.fillChunkRows() < 1) {
      throw new IllegalArgumentException(
          "DRIPLINE_MIGRATION_FILL_CHUNK_ROWS must be at least 1, not " + config.fillChunkRows());
    }
    long start = System.nanoTime();
    Position at = new Position();
    boolean[] skipped = new boolean[1];
    SchemaMigration.untilDone(
        () -> {
          try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
              s.execute("set lock_timeout = " + config.lockTimeout().toMillis());
              if (validated(c)) {
                skipped[0] = true;
              } else {
                fillBatches(c, at, config.fillChunkRows());
                fillRuns(c, at, config.fillChunkRows());
              }
              // The connection may go back to the engine's pool.
              s.execute("reset lock_timeout");
            }
          } catch (SQLException e) {
            throw new IllegalStateException("Filling the key bytes failed: " + e.getMessage(), e);
          }
        },
        () -> {},
        config);
    return new Filled(
        at.batches, at.runs, at.chunks, Duration.ofNanos(System.nanoTime() - start), skipped[0]);
  }

  private static void fillBatches(Connection c, Position at, int chunkRows) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(FILL_BATCHES)) {
      while (!at.batchesDone) {
        s.setLong(1, at.runId);
        s.setInt(2, at.number);
        s.setInt(3, chunkRows);
        try (ResultSet rs = s.executeQuery()) {
          if (!rs.next()) {
            at.batchesDone = true;
            return;
          }
          at.runId = rs.getLong(1);
          at.number = rs.getInt(2);
          at.batches += rs.getLong(3);
          at.chunks++;
        }
      }
    }
  }

  private static void fillRuns(Connection c, Position at, int chunkRows) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(FILL_RUNS)) {
      while (!at.runsDone) {
        s.setLong(1, at.id);
        s.setInt(2, chunkRows);
        try (ResultSet rs = s.executeQuery()) {
          if (!rs.next()) {
            at.runsDone = true;
            return;
          }
          at.id = rs.getLong(1);
          at.runs += rs.getLong(2);
          at.chunks++;
        }
      }
    }
  }

  /** Whether V43 validated the constraint: every batch has its bytes, for good. */
  private static boolean validated(Connection c) throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement(
            "select convalidated from pg_constraint"
                + " where conname = ? and conrelid = to_regclass('batches')")) {
      s.setString(1, CONSTRAINT);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /**
   * Opens a connection holding the fill's advisory lock, waiting without limit while another
   * process holds it (it is filling or migrating). It asks again and again rather than wait in one
   * statement: a statement waiting for the lock would hold a snapshot, which an index built
   * concurrently by the process holding the lock waits for.
   */
  private static Connection lock(DataSource dataSource) {
    try {
      Connection c = dataSource.getConnection();
      try (Statement s = c.createStatement()) {
        c.setAutoCommit(true);
        long delay = LOCK_POLL_INITIAL_MILLIS;
        while (true) {
          try (ResultSet rs = s.executeQuery("select pg_try_advisory_lock(" + LOCK_KEY + ")")) {
            rs.next();
            if (rs.getBoolean(1)) {
              return c;
            }
          }
          Thread.sleep(delay);
          delay = Math.min(delay * 2, LOCK_POLL_MAX_MILLIS);
        }
      } catch (SQLException | RuntimeException e) {
        c.close();
        throw e;
      } catch (InterruptedException e) {
        c.close();
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting for the fill's lock", e);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("Taking the fill's lock failed: " + e.getMessage(), e);
    }
  }

  /** Releases the lock by closing its connection (a pooled one is unlocked first). */
  private static void unlock(Connection c) {
    try (c;
        Statement s = c.createStatement()) {
      s.execute("select pg_advisory_unlock(" + LOCK_KEY + ")");
    } catch (SQLException e) {
      LOG.warn(
          "Releasing the fill's lock failed (the connection's end releases it): {}",
          e.getMessage());
    }
  }
}

package dev.dripline.examples;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * An independent witness of how many batches of one run execute at the same moment, kept in {@code
 * example_concurrency(run_id, current, max_seen)} so anyone can check the engine's cap with SQL,
 * without trusting the engine's own bookkeeping.
 *
 * <p><b>Why it is tied to database sessions.</b> A plain counter (increment at start, decrement at
 * end) stays inflated forever when a worker JVM is killed with {@code kill -9} mid-batch: the
 * decrement never runs, and every later reading over-counts. Instead each executing batch owns a
 * row in {@code example_executing} that records the backend pid of a connection the batch holds for
 * exactly as long as it executes. When the JVM dies, PostgreSQL ends that session, and the next
 * start or end of a batch of the run deletes rows whose pid is no longer in {@code
 * pg_stat_activity} before counting. {@code current} is therefore always recomputed from the rows
 * of live sessions, never adjusted by deltas.
 *
 * <p><b>Atomicity.</b> The start and the end of a batch are one call each of a server-side function
 * (migration V6: {@code example_witness_enter}, {@code example_witness_exit}) that locks the run's
 * {@code example_concurrency} row first, so starts and ends of one run are serialised and {@code
 * max_seen = greatest(max_seen, current)} cannot miss an overlap. The backend-status snapshot is
 * taken after the lock (a transaction caches it on first use), so it includes every session whose
 * row is visible. Being one statement in autocommit, the row is locked only while the function
 * runs; its commit does not wait for the WAL flush (see V6 for why that is safe here).
 *
 * <p>Limitation: a dead session's pid reused by a new, unrelated session would keep the dead row
 * counted; with Linux pid ranges this is unlikely within the life of a run.
 */
public final class ConcurrencyWitness {
  private final DataSource dataSource;

  /**
   * A witness whose readings and executions use {@code dataSource}: in a batch, the run's {@link
   * dev.dripline.spi.BackfillContext#dataSource()}.
   */
  public ConcurrencyWitness(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * A reading of the witness for one run.
   *
   * @param current batches executing right now
   * @param maxSeen most batches ever seen executing at once
   */
  public record Reading(int current, int maxSeen) {}

  /**
   * Records that a batch of {@code runId} starts executing. Keep the returned execution open for
   * exactly as long as the batch executes, and close it when the batch ends, however it ends.
   *
   * @param runId the run
   * @param batchKey a label of the batch (the SPI does not expose batch numbers, so examples pass
   *     the range's start key); saturated to fit the table's integer column, which is safe because
   *     the row is identified by the holding session's pid
   */
  public Execution enter(long runId, long batchKey) throws SQLException {
    return enter(runId, batchKey, null);
  }

  /**
   * {@link #enter(long, long)}, and, when the run draws from pool {@code pool} (P5), the same for
   * the pool's witness {@code example_pool_concurrency(pool, current, max_seen)} (migration V21:
   * {@code example_pool_witness_enter}, {@code example_pool_witness_exit}), on the same session.
   *
   * @param pool the run's pool, or {@code null} for none
   */
  public Execution enter(long runId, long batchKey, String pool) throws SQLException {
    int batchNumber = (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, batchKey));
    Connection connection = dataSource.getConnection();
    try (PreparedStatement statement =
        connection.prepareStatement("select example_witness_enter(?, ?)")) {
      statement.setLong(1, runId);
      statement.setInt(2, batchNumber);
      statement.execute();
      if (pool != null) {
        try (PreparedStatement poolEnter =
            connection.prepareStatement("select example_pool_witness_enter(?, ?)")) {
          poolEnter.setString(1, pool);
          poolEnter.setLong(2, runId);
          poolEnter.execute();
        }
      }
      return new Execution(connection, runId, pool);
    } catch (SQLException | RuntimeException e) {
      discard(connection, e);
      throw e;
    }
  }

  /** The witness's current reading for {@code runId}; zeros when no batch of it ever ran. */
  public Reading read(long runId) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement =
            connection.prepareStatement(
                "select current, max_seen from example_concurrency where run_id = ?")) {
      statement.setLong(1, runId);
      try (ResultSet rows = statement.executeQuery()) {
        return rows.next() ? new Reading(rows.getInt(1), rows.getInt(2)) : new Reading(0, 0);
      }
    }
  }

  /**
   * The witness's current reading for pool {@code pool}: batches of its runs executing right now
   * and the most ever seen at once; zeros when none ever ran.
   */
  public Reading readPool(String pool) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement =
            connection.prepareStatement(
                "select current, max_seen from example_pool_concurrency where pool = ?")) {
      statement.setString(1, pool);
      try (ResultSet rows = statement.executeQuery()) {
        return rows.next() ? new Reading(rows.getInt(1), rows.getInt(2)) : new Reading(0, 0);
      }
    }
  }

  /** One executing batch; closing it records the batch's end and releases its session. */
  public static final class Execution implements AutoCloseable {
    private final Connection connection;
    private final long runId;
    private final String pool;
    private boolean closed;

    private Execution(Connection connection, long runId, String pool) {
      this.connection = connection;
      this.runId = runId;
      this.pool = pool;
    }

    @Override
    public void close() throws SQLException {
      if (closed) {
        return;
      }
      closed = true;
      try (PreparedStatement statement =
          connection.prepareStatement("select example_witness_exit(?)")) {
        if (pool != null) {
          try (PreparedStatement poolExit =
              connection.prepareStatement("select example_pool_witness_exit(?)")) {
            poolExit.setString(1, pool);
            poolExit.execute();
          }
        }
        statement.setLong(1, runId);
        statement.execute();
      } catch (SQLException | RuntimeException e) {
        discard(connection, e);
        throw e;
      }
      connection.close();
    }
  }

  /**
   * Gives up a connection whose witness call failed (in autocommit, so PostgreSQL rolled it back).
   * The physical session is aborted rather than returned to the pool: a pooled session that still
   * owns an {@code example_executing} row would keep that row counted as executing.
   */
  private static void discard(Connection connection, Exception failure) {
    try {
      connection.abort(Runnable::run);
    } catch (SQLException | RuntimeException e) {
      failure.addSuppressed(e);
    }
    try {
      connection.close();
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
  }
}

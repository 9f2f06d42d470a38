package dev.dripline.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * W2's first baseline: a plain JDBC thread pool, inside the bench JVM. A fixed pool of {@code
 * threads} threads and a HikariCP pool of as many connections (opened before the clock starts, as
 * Dripline's pool is warm) run the example's UPDATE ({@link W2Example#process}) once per batch, in
 * auto-commit, exactly as the example does in a Dripline batch. The bench's thread plans on its own
 * connection, page by page with {@link W2Ranges#plan}, and submits each batch as soon as its page
 * is read. Timed from the first planning query to the last batch's completion.
 */
final class W2JdbcPool {
  private W2JdbcPool() {}

  /** What one run did. */
  record Result(
      double seconds, int batches, long rowsUpdated, W2Ranges.Fingerprint ranges, int threads) {}

  /**
   * {@code book}: system B ({@link W2Bookkeeping}) — each batch in a transaction with Dripline's
   * bookkeeping statement, its row inserted by the planner.
   */
  static Result run(
      String url,
      String user,
      String password,
      W2Example example,
      int threads,
      int batchSize,
      boolean book)
      throws Exception {
    HikariConfig hikari = new HikariConfig();
    hikari.setJdbcUrl(url);
    hikari.setUsername(user);
    hikari.setPassword(password);
    hikari.setMaximumPoolSize(threads);
    hikari.setMinimumIdle(threads);
    hikari.setPoolName("w2-jdbc");
    AtomicInteger threadCount = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            threads,
            runnable -> {
              Thread thread = new Thread(runnable, "w2-jdbc-" + threadCount.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    try (HikariDataSource dataSource = new HikariDataSource(hikari);
        Connection planner = DriverManager.getConnection(url, user, password)) {
      warm(dataSource, threads);
      if (book) {
        W2Bookkeeping.prepare(planner, batchSize);
      }
      AtomicInteger planned = new AtomicInteger();
      AtomicLong updated = new AtomicLong();
      List<W2Ranges.Range> ranges = new ArrayList<>();
      List<Future<?>> futures = new ArrayList<>();
      long start = System.nanoTime();
      int batches =
          W2Ranges.plan(
              planner,
              example,
              batchSize,
              range -> {
                ranges.add(range);
                int number = planned.incrementAndGet();
                if (book) {
                  try {
                    W2Bookkeeping.planned(planner, number, range);
                  } catch (SQLException e) {
                    throw new IllegalStateException(e);
                  }
                }
                futures.add(
                    pool.submit(
                        () ->
                            updated.addAndGet(
                                book
                                    ? processAndRecord(dataSource, example, range, number)
                                    : process(dataSource, example, range))));
              });
      for (Future<?> future : futures) {
        try {
          future.get();
        } catch (ExecutionException e) {
          throw new IllegalStateException("a JDBC pool batch failed", e.getCause());
        }
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      return new Result(seconds, batches, updated.get(), W2Ranges.Fingerprint.of(ranges), threads);
    } finally {
      pool.shutdownNow();
    }
  }

  /** One batch: the example's own statement over the batch's range, auto-commit. */
  private static long process(HikariDataSource dataSource, W2Example example, W2Ranges.Range range)
      throws SQLException {
    try (Connection connection = dataSource.getConnection()) {
      return example.process(connection, range);
    }
  }

  /** System B's batch: the UPDATE and Dripline's bookkeeping statement in one transaction. */
  private static long processAndRecord(
      HikariDataSource dataSource, W2Example example, W2Ranges.Range range, int number)
      throws SQLException {
    try (Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(false);
      try {
        long rows = example.process(connection, range);
        W2Bookkeeping.record(connection, number);
        connection.commit();
        return rows;
      } catch (SQLException | RuntimeException e) {
        connection.rollback();
        throw e;
      } finally {
        connection.setAutoCommit(true);
      }
    }
  }

  /** Opens all {@code n} connections before the clock starts. */
  static void warm(HikariDataSource dataSource, int n) throws SQLException {
    List<Connection> held = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        held.add(dataSource.getConnection());
      }
    } finally {
      for (Connection c : held) {
        c.close();
      }
    }
  }
}

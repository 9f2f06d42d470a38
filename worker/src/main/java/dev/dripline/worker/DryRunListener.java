package dev.dripline.worker;

import dev.dripline.activities.run.DryRunPlanner;
import dev.dripline.store.dryrun.DryRunAnswer;
import dev.dripline.store.dryrun.DryRunChannel;
import dev.dripline.store.dryrun.DryRunRequest;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.event.StartupEvent;
import io.micronaut.json.JsonMapper;
import io.micronaut.runtime.event.annotation.EventListener;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers the app's dry runs (K5 in docs/spec.md, {@link DryRunChannel}): listens on PostgreSQL for
 * requests, and for a definition this worker hosts, plans it ({@link DryRunPlanner}) and notifies
 * the answer. Of several workers that host it, the one that takes the request's advisory lock first
 * answers; a second answer would be ignored.
 *
 * <p>It holds one connection for listening, taken again after a lost one; planning runs on a thread
 * of its own, so a long count does not hold up the next request.
 */
@Singleton
@Requires(property = "dripline.worker.enabled", value = "true", defaultValue = "true")
public class DryRunListener {
  private static final Logger LOG = LoggerFactory.getLogger(DryRunListener.class);
  private static final int WAIT_MILLIS = 1_000;

  private final DataSource dataSource;
  private final DryRunPlanner planner;
  private final JsonMapper json;
  private final ExecutorService planning =
      Executors.newFixedThreadPool(
          2,
          runnable -> {
            Thread thread = new Thread(runnable, "dripline-dry-run");
            thread.setDaemon(true);
            return thread;
          });
  private volatile boolean running = true;
  private Thread listener;

  public DryRunListener(DataSource dataSource, DryRunPlanner planner, JsonMapper json) {
    this.dataSource = dataSource;
    this.planner = planner;
    this.json = json;
  }

  @EventListener
  void onStartup(StartupEvent event) {
    listener = new Thread(this::listen, "dripline-dry-run-listener");
    listener.setDaemon(true);
    listener.start();
  }

  @PreDestroy
  void close() {
    running = false;
    planning.shutdownNow();
    if (listener != null) {
      listener.interrupt();
    }
  }

  private void listen() {
    while (running) {
      try (Connection connection = dataSource.getConnection()) {
        connection.setAutoCommit(true);
        try (Statement statement = connection.createStatement()) {
          statement.execute("listen " + DryRunChannel.REQUESTS);
        }
        PGConnection pg = connection.unwrap(PGConnection.class);
        while (running) {
          PGNotification[] notifications = pg.getNotifications(WAIT_MILLIS);
          if (notifications == null) {
            continue;
          }
          for (PGNotification notification : notifications) {
            if (DryRunChannel.REQUESTS.equals(notification.getName())) {
              String payload = notification.getParameter();
              planning.execute(() -> answer(payload));
            }
          }
        }
      } catch (SQLException | RuntimeException e) {
        if (running) {
          LOG.warn("Dry-run listener lost PostgreSQL: {}; listening again in 1 s", e.toString());
          sleep();
        }
      }
    }
  }

  private void answer(String payload) {
    DryRunRequest request;
    try {
      request = json.readValue(payload, DryRunRequest.class);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Ignoring an unreadable dry-run request: {}", e.toString());
      return;
    }
    if (!planner.hosts(request.backfill())) {
      return;
    }
    try (Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(true);
      if (!lock(connection, request.id(), "pg_try_advisory_lock")) {
        return; // another worker answers it
      }
      try {
        DryRunAnswer answer = fitted(planner.plan(request));
        try (PreparedStatement notify = connection.prepareStatement("select pg_notify(?, ?)")) {
          notify.setString(1, DryRunChannel.ANSWERS);
          notify.setString(2, json.writeValueAsString(answer));
          notify.execute();
        }
      } finally {
        lock(connection, request.id(), "pg_advisory_unlock");
      }
    } catch (SQLException | IOException | RuntimeException e) {
      LOG.warn("Dry run {} of {} not answered: {}", request.id(), request.backfill(), e.toString());
    }
  }

  /** {@code answer}, its sample batches dropped if it would not fit in a notification. */
  private DryRunAnswer fitted(DryRunAnswer answer) throws IOException {
    if (json.writeValueAsString(answer).getBytes(StandardCharsets.UTF_8).length
        <= DryRunChannel.MAX_PAYLOAD) {
      return answer;
    }
    DryRunAnswer bare =
        new DryRunAnswer(
            answer.id(),
            answer.error(),
            answer.totalKeys(),
            answer.totalKeysExact(),
            answer.batches(),
            answer.firstKey(),
            answer.lastKey(),
            List.of());
    if (json.writeValueAsString(bare).getBytes(StandardCharsets.UTF_8).length
        <= DryRunChannel.MAX_PAYLOAD) {
      return bare;
    }
    return DryRunAnswer.failed(answer.id(), "the keys are too long to show in a dry run's answer");
  }

  private static boolean lock(Connection connection, String id, String function)
      throws SQLException {
    try (PreparedStatement statement =
        connection.prepareStatement(
            "select " + function + "(hashtext('dripline.dry-run'), hashtext(?))")) {
      statement.setString(1, id);
      try (ResultSet row = statement.executeQuery()) {
        row.next();
        return row.getBoolean(1);
      }
    }
  }

  private static void sleep() {
    try {
      Thread.sleep(1_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

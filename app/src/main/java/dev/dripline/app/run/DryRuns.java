package dev.dripline.app.run;

import dev.dripline.app.problem.UnavailableProblem;
import dev.dripline.store.dryrun.DryRunAnswer;
import dev.dripline.store.dryrun.DryRunChannel;
import dev.dripline.store.dryrun.DryRunRequest;
import io.micronaut.context.annotation.Value;
import io.micronaut.json.JsonMapper;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Asks a worker to plan a dry run (K5 in docs/spec.md, {@link DryRunChannel}) and waits for its
 * answer: the app never loads backfill code, and a dry run saves no row and starts no workflow.
 */
@Singleton
public class DryRuns {
  private final DataSource dataSource;
  private final JsonMapper json;
  private final Duration timeout;

  public DryRuns(
      DataSource dataSource,
      JsonMapper json,
      @Value("${dripline.api.dry-run-timeout:30s}") Duration timeout) {
    this.dataSource = dataSource;
    this.json = json;
    this.timeout = timeout;
  }

  /**
   * The answer of a worker that hosts {@code request}'s definition.
   *
   * @throws UnavailableProblem when none answers within the timeout, or PostgreSQL cannot be
   *     reached
   */
  DryRunAnswer ask(DryRunRequest request) {
    try (Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(true);
      try (Statement statement = connection.createStatement()) {
        statement.execute("listen " + DryRunChannel.ANSWERS);
      }
      try {
        try (PreparedStatement notify = connection.prepareStatement("select pg_notify(?, ?)")) {
          notify.setString(1, DryRunChannel.REQUESTS);
          notify.setString(2, json.writeValueAsString(request));
          notify.execute();
        }
        PGConnection pg = connection.unwrap(PGConnection.class);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
          long left = (deadline - System.nanoTime()) / 1_000_000;
          if (left <= 0) {
            throw new UnavailableProblem(
                "no worker that hosts "
                    + request.backfill()
                    + " answered the dry run within "
                    + timeout.toSeconds()
                    + " s",
                null);
          }
          PGNotification[] notifications = pg.getNotifications((int) Math.min(left, 1_000));
          if (notifications == null) {
            continue;
          }
          for (PGNotification notification : notifications) {
            if (DryRunChannel.ANSWERS.equals(notification.getName())) {
              DryRunAnswer answer = json.readValue(notification.getParameter(), DryRunAnswer.class);
              if (request.id().equals(answer.id())) {
                return answer;
              }
            }
          }
        }
      } finally {
        try (Statement statement = connection.createStatement()) {
          statement.execute("unlisten *");
        }
      }
    } catch (SQLException | IOException e) {
      throw new UnavailableProblem("the dry run could not be asked for: " + e.getMessage(), e);
    }
  }
}

package dev.dripline.activities.webhooks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.RunRepository;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The events migration V38's triggers write (spec O3): which changes of targets and of the
 * throttle's checks and brake are events, one delivery row per subscribed endpoint, and none
 * without a subscriber. Statements as the engine's repositories issue them, on the test database.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class WebhookEventsIT {
  private final String tag = "webhook-events-" + UUID.randomUUID().toString().substring(0, 8);

  @Inject Database database;
  @Inject RunFixtures fixtures;
  @Inject RunRepository runs;

  @AfterEach
  void tearDown() {
    execute("delete from webhook_endpoints where url like ?", "http://" + tag + "%");
    execute("delete from targets where name = ?", tag);
    execute("delete from throttle_checks where name = ?", tag);
    fixtures.deleteCreated();
  }

  private int execute(String sql, Object... args) {
    return database.inTransaction(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
              statement.setObject(i + 1, args[i]);
            }
            return statement.executeUpdate();
          }
        });
  }

  /** The types of the events for endpoint {@code url} whose data's {@code field} is the tag. */
  private List<String> events(String url, String field) {
    return events(url, field, tag);
  }

  /**
   * The types of the events for endpoint {@code url} whose data's {@code field} is {@code value}.
   */
  private List<String> events(String url, String field, String value) {
    return database.inTransaction(
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement(
                  "select v.type from webhook_deliveries d"
                      + " join webhook_endpoints e on e.id = d.endpoint_id"
                      + " join webhook_events v on v.id = d.event_id"
                      + " where e.url = ? and (v.data ->> ? = ?) order by v.id")) {
            query.setString(1, url);
            query.setString(2, field);
            query.setString(3, value);
            List<String> types = new ArrayList<>();
            try (ResultSet rows = query.executeQuery()) {
              while (rows.next()) {
                types.add(rows.getString(1));
              }
            }
            return types;
          }
        });
  }

  private String subscribe(String suffix, String... events) {
    String url = "http://" + tag + suffix;
    execute(
        "insert into webhook_endpoints (url, events, secret) values (?, ?::text[], 'whsec_AA==')",
        url,
        "{" + String.join(",", events) + "}");
    return url;
  }

  @Test
  void aRunStartsOnceAndEachEndIsAnEventAResumeOrARetryIsNot() {
    String url = subscribe("/runs", "run.started", "run.completed", "run.failed", "run.stopped");
    long run = fixtures.run("pending", "{\"items\":4}", 2, null);

    runs.markRunning(run);
    runs.recordStatus(run, "paused");
    runs.recordStatus(run, "running");
    runs.markEnded(run, "failed", "boom");
    runs.reopen(run);
    runs.markEnded(run, "stopped", null);
    runs.reopen(run);
    runs.markEnded(run, "completed", null);

    assertThat(events(url, "runId", Long.toString(run)))
        .containsExactly("run.started", "run.failed", "run.stopped", "run.completed");
  }

  @Test
  void aTargetIsFailingOnceItsStreakReachesThreeAndPrimedOnceItIsPrimed() {
    String all = subscribe("/all", "target.failing", "target.primed");
    String primedOnly = subscribe("/primed", "target.primed");
    execute(
        "insert into targets (name, backfill, options, state) values (?, 'b', '{}', 'backfilling')",
        tag);

    for (int streak = 1; streak <= 4; streak++) {
      execute("update targets set consecutive_failures = ? where name = ?", streak, tag);
    }
    execute("update targets set consecutive_failures = 0 where name = ?", tag);
    execute("update targets set consecutive_failures = 3 where name = ?", tag);
    execute("update targets set state = 'primed' where name = ?", tag);
    // A primed target is never failing, whatever its streak (T6).
    execute("update targets set consecutive_failures = 5 where name = ?", tag);
    execute("update targets set state = 'needs_resync' where name = ?", tag);

    assertThat(events(all, "target"))
        .containsExactly("target.failing", "target.failing", "target.primed", "target.failing");
    assertThat(events(primedOnly, "target")).containsExactly("target.primed");
  }

  @Test
  void aCheckThatStartsOrStopsHoldingIsAThrottleEvent() {
    String url = subscribe("/throttle", "throttle.held", "throttle.released");
    String insert =
        "insert into throttle_checks (name, kind, threshold, resume_below, state, holding,"
            + " since, evaluated_at) values (?, 'sql', 1, 1, 'over', ?, now(), now())"
            + " on conflict (name) do update set holding = excluded.holding";

    execute(insert, tag, true);
    execute(insert, tag, true);
    execute(insert, tag, false);
    execute(insert, tag, false);
    execute(insert, tag, true);
    execute("delete from throttle_checks where name = ?", tag);

    assertThat(events(url, "hold"))
        .containsExactly(
            "throttle.held", "throttle.released", "throttle.held", "throttle.released");
  }

  @Test
  void withoutASubscriberNothingIsWritten() {
    subscribe("/runs", "run.completed");
    long before = count("select count(*) from webhook_events");

    execute(
        "insert into targets (name, backfill, options, state, consecutive_failures)"
            + " values (?, 'b', '{}', 'backfilling', 0)",
        tag);
    execute("update targets set consecutive_failures = 3, state = 'primed' where name = ?", tag);

    assertThat(count("select count(*) from webhook_events")).isEqualTo(before);
  }

  private long count(String sql) {
    return database.inTransaction(
        connection -> {
          try (PreparedStatement query = connection.prepareStatement(sql);
              ResultSet rows = query.executeQuery()) {
            rows.next();
            return rows.getLong(1);
          }
        });
  }
}

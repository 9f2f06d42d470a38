package dev.dripline.worker.throttle;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.throttle.CheckEvaluator;
import dev.dripline.store.throttle.CheckRowRepository;
import dev.dripline.store.throttle.ThrottleChecks;
import dev.dripline.store.throttle.ThrottleConfig;
import io.micronaut.context.ApplicationContext;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The worker's schedule of health checks at start-up, against real PostgreSQL. */
class CheckScheduleIT {
  private static final String GONE = "schedule-it-gone";
  private static final String KEPT = "schedule-it-kept";

  private ApplicationContext context;
  private CheckRowRepository rows;
  private CheckSchedule schedule;

  @BeforeEach
  void setUp() {
    context =
        ApplicationContext.run(
            Map.of(
                "dripline.temporal.address",
                "127.0.0.1:1",
                "dripline.throttle.evaluate",
                "false",
                "dripline.throttle.checks." + KEPT + ".kind",
                "sql",
                "dripline.throttle.checks." + KEPT + ".query",
                "select 1",
                "dripline.throttle.checks." + KEPT + ".threshold",
                "10"),
            "test");
    rows = context.getBean(CheckRowRepository.class);
  }

  @AfterEach
  void tearDown() {
    if (schedule != null) {
      schedule.close();
    }
    rows.deleteByName(GONE);
    rows.deleteByName(KEPT);
    context.close();
  }

  /**
   * A check taken out of the configuration must not keep holding runs through the row it left: the
   * evaluator never writes it again, so start-up forgets it.
   */
  @Test
  void startUpForgetsTheRowsOfChecksNoLongerConfigured() {
    Instant then = Instant.parse("2026-01-01T00:00:00Z");
    rows.record(GONE, "sql", 99.0, 1, 0.8, "over", true, then, then, null);
    rows.record(KEPT, "sql", 1.0, 10, 8, "clear", false, then, then, null);

    schedule =
        new CheckSchedule(
            context.getBean(ThrottleChecks.class),
            context.getBean(CheckEvaluator.class),
            new ThrottleConfig(true));
    schedule.onStartup(null);

    assertThat(rows.findByName(GONE)).isEmpty();
    assertThat(rows.findByName(KEPT)).isPresent();
  }
}

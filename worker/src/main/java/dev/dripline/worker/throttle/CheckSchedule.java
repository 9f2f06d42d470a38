package dev.dripline.worker.throttle;

import dev.dripline.activities.throttle.CheckEvaluator;
import dev.dripline.runtime.throttle.ThrottleCheck;
import dev.dripline.runtime.throttle.ThrottleChecks;
import dev.dripline.runtime.throttle.ThrottleConfig;
import io.micronaut.context.event.StartupEvent;
import io.micronaut.runtime.event.annotation.EventListener;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evaluates each health check on its interval, at a fixed rate, on a daemon thread of its own in
 * the worker process (the host of Dripline's background work): a slow reading — a replica that
 * takes its time to connect — neither stretches its own interval nor delays another check's. Every
 * worker tries; {@link CheckEvaluator} lets one of them evaluate per interval. At start-up it first
 * deletes the rows of checks it is not configured with. Off with {@code
 * dripline.throttle.evaluate=false}.
 */
@Singleton
public class CheckSchedule {
  private static final Logger LOG = LoggerFactory.getLogger(CheckSchedule.class);

  private final ThrottleChecks checks;
  private final CheckEvaluator evaluator;
  private final ThrottleConfig config;
  private final Clock clock = Clock.systemUTC();
  private ScheduledExecutorService executor;

  public CheckSchedule(ThrottleChecks checks, CheckEvaluator evaluator, ThrottleConfig config) {
    this.checks = checks;
    this.evaluator = evaluator;
    this.config = config;
  }

  @EventListener
  void onStartup(StartupEvent event) {
    if (!config.evaluate()) {
      return;
    }
    forgetUnconfigured();
    if (checks.all().isEmpty()) {
      return;
    }
    AtomicInteger threads = new AtomicInteger();
    executor =
        Executors.newScheduledThreadPool(
            checks.all().size(),
            runnable -> {
              Thread thread =
                  new Thread(runnable, "dripline-throttle-" + threads.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    for (ThrottleCheck check : checks.all()) {
      var unused =
          executor.scheduleAtFixedRate(
              () -> evaluate(check), 0, check.interval().toMillis(), TimeUnit.MILLISECONDS);
    }
    LOG.info("Evaluating {} health check(s)", checks.all().size());
  }

  /** Deletes the rows of checks taken out of the configuration, which would otherwise hold runs. */
  private void forgetUnconfigured() {
    try {
      int forgotten = evaluator.forgetUnconfigured();
      if (forgotten > 0) {
        LOG.info("Forgot {} health check(s) no longer configured", forgotten);
      }
    } catch (RuntimeException e) {
      LOG.warn("Health checks no longer configured not forgotten: {}", e.toString());
    }
  }

  private void evaluate(ThrottleCheck check) {
    try {
      evaluator.evaluateIfDue(check, clock.instant());
    } catch (RuntimeException e) {
      // Dripline's own database is unreachable: nothing can be recorded; try on the next tick.
      LOG.warn("Health check {} not recorded: {}", check.name(), e.toString());
    }
  }

  @PreDestroy
  void close() {
    if (executor != null) {
      executor.shutdownNow();
    }
  }
}

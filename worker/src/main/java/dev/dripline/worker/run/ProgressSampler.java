package dev.dripline.worker.run;

import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.store.run.ProgressSampleRepository;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.event.StartupEvent;
import io.micronaut.runtime.event.annotation.EventListener;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples every running run's progress once per {@code dripline.engine.throughput-sample-interval}
 * ({@link ProgressSampleRepository#sample}), for the dashboard's throughput chart, on a daemon
 * thread of the worker process. Each pass runs just after an interval starts, so a sample stands
 * for its run's progress at the interval's start; every worker samples, and the first sample of a
 * run in an interval is the one kept.
 */
@Singleton
@Requires(property = "dripline.worker.enabled", value = "true", defaultValue = "true")
public class ProgressSampler {
  private static final Logger LOG = LoggerFactory.getLogger(ProgressSampler.class);

  private final ProgressSampleRepository samples;
  private final Duration interval;
  private final Clock clock;
  private ScheduledExecutorService executor;
  private boolean failing;

  @Inject
  public ProgressSampler(ProgressSampleRepository samples, EngineConfig engine) {
    this(samples, engine.throughputSampleInterval(), Clock.systemUTC());
  }

  ProgressSampler(ProgressSampleRepository samples, Duration interval, Clock clock) {
    this.samples = samples;
    this.interval = interval;
    this.clock = clock;
  }

  @EventListener
  void onStartup(StartupEvent event) {
    executor =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "dripline-progress-samples");
              thread.setDaemon(true);
              return thread;
            });
    scheduleNext();
  }

  private void scheduleNext() {
    var unused = executor.schedule(this::pass, delayToNextInterval(), TimeUnit.MILLISECONDS);
  }

  /** Milliseconds from now to the start of the next sampling interval. */
  long delayToNextInterval() {
    Instant now = clock.instant();
    Instant next = ProgressSampleRepository.intervalStart(now, interval).plus(interval);
    return Math.max(1, next.toEpochMilli() - now.toEpochMilli());
  }

  private void pass() {
    try {
      sampleNow();
      if (failing) {
        failing = false;
        LOG.info("Run progress sampled again");
      }
    } catch (RuntimeException e) {
      // PostgreSQL unreachable: this interval has no sample; the chart reads the one before.
      // Said once per outage, not once per pass.
      if (!failing) {
        failing = true;
        LOG.warn("Run progress not sampled, retrying every interval: {}", e.toString());
      }
    } finally {
      if (!executor.isShutdown()) {
        scheduleNext();
      }
    }
  }

  /**
   * Samples the running runs in the interval that holds the clock's now.
   *
   * @return the samples written (0 for runs this or another worker sampled in it already)
   */
  public int sampleNow() {
    return samples.sample(ProgressSampleRepository.intervalStart(clock.instant(), interval));
  }

  @PreDestroy
  void close() {
    if (executor != null) {
      executor.shutdownNow();
    }
  }
}

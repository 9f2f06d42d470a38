package dev.dripline.run;

import io.micronaut.context.annotation.Value;
import io.temporal.activity.Activity;
import io.temporal.activity.ActivityExecutionContext;
import io.temporal.client.ActivityCompletionException;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link BatchActivities} for Temporal: runs {@link BatchExecution} while a background ticker
 * heartbeats, so a long batch is not presumed dead and a dead worker's batch is retried within the
 * heartbeat timeout rather than the whole start-to-close timeout.
 *
 * <p>The heartbeat comes from a ticker because definition code cannot be asked to heartbeat; the
 * SDK's heartbeat is thread-safe and throttles what it sends to the server.
 */
@Singleton
public class BatchActivitiesImpl implements BatchActivities {
  private static final Logger LOG = LoggerFactory.getLogger(BatchActivitiesImpl.class);
  private static final Duration MAX_TICK = Duration.ofSeconds(5);

  private final BatchExecution execution;
  private final ScheduledExecutorService ticker;

  public BatchActivitiesImpl(
      BatchExecution execution,
      @Value("${dripline.worker.heartbeat-threads:2}") int heartbeatThreads) {
    this.execution = execution;
    AtomicInteger count = new AtomicInteger();
    this.ticker =
        Executors.newScheduledThreadPool(
            Math.max(1, heartbeatThreads),
            runnable -> {
              Thread thread = new Thread(runnable, "dripline-heartbeat-" + count.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
  }

  @Override
  public BatchResult processBatch(BatchWork work) {
    // The context is bound to this (the activity's) thread; the ticker uses the captured one.
    ActivityExecutionContext context = Activity.getExecutionContext();
    long every = tickMillis(context.getInfo().getHeartbeatTimeout());
    AtomicBoolean rejected = new AtomicBoolean();
    ScheduledFuture<?> heartbeat =
        ticker.scheduleAtFixedRate(
            () -> heartbeat(context, work, rejected), every, every, TimeUnit.MILLISECONDS);
    try {
      // A chain takes no further batch once the server rejected a heartbeat: this attempt was
      // cancelled or timed out, and another attempt may hold the slot by now.
      return execution.process(work, () -> !rejected.get());
    } finally {
      heartbeat.cancel(false);
    }
  }

  /** A third of the heartbeat timeout, so two ticks may be lost; at most {@link #MAX_TICK}. */
  static long tickMillis(Duration heartbeatTimeout) {
    if (heartbeatTimeout == null || heartbeatTimeout.isZero() || heartbeatTimeout.isNegative()) {
      return MAX_TICK.toMillis();
    }
    return Math.max(100, Math.min(heartbeatTimeout.toMillis() / 3, MAX_TICK.toMillis()));
  }

  private static void heartbeat(
      ActivityExecutionContext context, BatchWork work, AtomicBoolean rejected) {
    try {
      context.heartbeat(null);
    } catch (ActivityCompletionException e) {
      rejected.set(true);
      // Cancelled or timed out on the server: the attempt's result will be discarded and the
      // batch's completion is a compare-and-set, so letting the definition finish is harmless.
      LOG.debug(
          "Heartbeat of batch {} of run {} rejected: {}",
          work.batch().number(),
          work.runId(),
          e.toString());
    } catch (RuntimeException e) {
      LOG.warn("Heartbeat of batch {} of run {} failed", work.batch().number(), work.runId(), e);
    }
  }

  @PreDestroy
  void close() {
    ticker.shutdownNow();
  }
}

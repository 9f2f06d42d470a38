package dev.dripline.activities.run;

import dev.dripline.activities.heartbeat.HeartbeatTicker;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.workflows.run.BatchActivities;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchWork;
import io.micronaut.context.annotation.Value;
import io.temporal.activity.Activity;
import io.temporal.activity.ActivityExecutionContext;
import io.temporal.activity.ActivityInfo;
import io.temporal.client.ActivityCompletionException;
import io.temporal.failure.ApplicationFailure;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link BatchActivities} for Temporal: runs {@link BatchExecution} as one {@link BatchAttempt}
 * while a background ticker keeps it alive and fences it.
 *
 * <p>Every tick of the worker's {@link HeartbeatTicker} heartbeats to Temporal (so a long batch is
 * not presumed dead, and a dead worker's batch is retried within the heartbeat timeout rather than
 * the start-to-close timeout), and fences the attempt — interrupts its definition, cancels its
 * statement — once Temporal rejected a heartbeat, once the start-to-close deadline is near, or once
 * the lease of the batch it holds was not renewed for too long. The lease (as long as the heartbeat
 * timeout) is renewed in PostgreSQL on threads of its own, so a slow database never delays a
 * heartbeat. A heartbeat from a ticker keeps a hung definition from tripping the heartbeat timeout;
 * the start-to-close deadline is what stops it (R5b).
 *
 * <p>The heartbeat comes from a ticker because definition code cannot be asked to heartbeat; the
 * SDK's heartbeat is thread-safe and throttles what it sends to the server.
 *
 * <p>An attempt on a worker that does not host the run's definition takes no lease and runs
 * nothing: it fails retryably until the task has waited {@code
 * dripline.engine.unknown-backfill-wait} for a worker that does ({@link DefinitionWait}). When the
 * task began to wait travels from attempt to attempt in the heartbeat details, which the SDK sends
 * with the failure; an attempt that hosts the definition heartbeats none.
 */
@Singleton
public class BatchActivitiesImpl implements BatchActivities {
  private static final Logger LOG = LoggerFactory.getLogger(BatchActivitiesImpl.class);
  private static final Duration MAX_TICK = Duration.ofSeconds(5);

  /** How long before Temporal's start-to-close timeout the attempt stops itself, at most. */
  private static final Duration DEADLINE_MARGIN = Duration.ofSeconds(1);

  private final BatchExecution execution;
  private final Duration defaultLease;
  private final HeartbeatTicker ticker;
  private final ScheduledExecutorService leases;
  private final DefinitionWait definitionWait;

  public BatchActivitiesImpl(
      BatchExecution execution,
      EngineConfig engine,
      HeartbeatTicker ticker,
      @Value("${dripline.worker.heartbeat-threads:2}") int leaseThreads) {
    this.execution = execution;
    this.defaultLease = engine.batchHeartbeatTimeout();
    this.ticker = ticker;
    this.definitionWait = new DefinitionWait(engine.unknownBackfillWait());
    AtomicInteger count = new AtomicInteger();
    this.leases =
        Executors.newScheduledThreadPool(
            Math.max(1, leaseThreads),
            runnable -> {
              Thread thread = new Thread(runnable, "dripline-lease-" + count.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
  }

  @Override
  public BatchResult processBatch(BatchWork work) {
    // The context is bound to this (the activity's) thread; the ticker uses the captured one.
    ActivityExecutionContext context = Activity.getExecutionContext();
    ActivityInfo info = context.getInfo();
    if (!execution.hosts(work.backfill())) {
      throw waitForHost(context, work.backfill());
    }
    Duration heartbeatTimeout = info.getHeartbeatTimeout();
    BatchAttempt attempt =
        new BatchAttempt(
            info.getWorkflowId()
                + "/"
                + info.getWorkflowRunId()
                + "/"
                + info.getActivityId()
                + "#"
                + info.getAttempt(),
            isPositive(heartbeatTimeout) ? heartbeatTimeout : defaultLease,
            info.getAttempt() > 1);
    long deadline = System.nanoTime() + untilDeadline(info.getStartToCloseTimeout()).toNanos();
    long every = tickMillis(heartbeatTimeout);
    ScheduledFuture<?> heartbeat =
        ticker.every(every, () -> tick(context, work, attempt, deadline));
    ScheduledFuture<?> lease =
        leases.scheduleWithFixedDelay(
            () -> renew(work, attempt), every, every, TimeUnit.MILLISECONDS);
    try {
      return execution.process(work, attempt);
    } finally {
      heartbeat.cancel(false);
      lease.cancel(false);
    }
  }

  /**
   * The failure of an attempt on a worker that does not host {@code backfill}: the task has waited
   * since the time an earlier such attempt heartbeat, else since now, which this attempt heartbeats
   * for the next.
   */
  private ApplicationFailure waitForHost(ActivityExecutionContext context, String backfill) {
    Instant now = Instant.now();
    Instant since = now;
    try {
      since = context.getHeartbeatDetails(Long.class).map(Instant::ofEpochMilli).orElse(now);
    } catch (RuntimeException unreadable) {
      LOG.debug("Heartbeat details of a batch unreadable: {}", unreadable.toString());
    }
    try {
      context.heartbeat(since.toEpochMilli());
    } catch (RuntimeException e) {
      LOG.debug("Heartbeat of a batch waiting for {} failed: {}", backfill, e.toString());
    }
    return definitionWait.notHosted(backfill, since, now);
  }

  private static boolean isPositive(Duration duration) {
    return duration != null && !duration.isZero() && !duration.isNegative();
  }

  /**
   * How long the attempt may run: its start-to-close timeout less a margin (a tenth of it, at most
   * {@link #DEADLINE_MARGIN}), so it stops before Temporal starts the next attempt.
   */
  static Duration untilDeadline(Duration startToClose) {
    if (!isPositive(startToClose)) {
      return Duration.ofDays(36_500);
    }
    Duration margin = startToClose.dividedBy(10);
    return startToClose.minus(margin.compareTo(DEADLINE_MARGIN) > 0 ? DEADLINE_MARGIN : margin);
  }

  /** A third of the heartbeat timeout, so two ticks may be lost; at most {@link #MAX_TICK}. */
  static long tickMillis(Duration heartbeatTimeout) {
    if (!isPositive(heartbeatTimeout)) {
      return MAX_TICK.toMillis();
    }
    return Math.max(100, Math.min(heartbeatTimeout.toMillis() / 3, MAX_TICK.toMillis()));
  }

  private static void tick(
      ActivityExecutionContext context, BatchWork work, BatchAttempt attempt, long deadline) {
    long now = System.nanoTime();
    if (now - deadline >= 0) {
      attempt.fence(BatchAttempt.Fence.TIMED_OUT);
    }
    attempt.checkLease(now);
    try {
      context.heartbeat(null);
    } catch (ActivityCompletionException e) {
      // Cancelled or timed out on the server: another attempt may take the batch over once this
      // one's lease runs out, so this one stops now.
      attempt.fence(BatchAttempt.Fence.REJECTED);
      LOG.debug(
          "Heartbeat of batch {} of run {} rejected: {}",
          work.batch().number(),
          work.runId(),
          e.toString());
    } catch (RuntimeException e) {
      LOG.warn("Heartbeat of batch {} of run {} failed", work.batch().number(), work.runId(), e);
    }
  }

  private void renew(BatchWork work, BatchAttempt attempt) {
    if (!attempt.mayContinue()) {
      return; // a fenced attempt lets its lease run out
    }
    try {
      execution.renewLease(work.runId(), attempt);
    } catch (RuntimeException e) {
      LOG.debug("Could not renew the lease of {}: {}", attempt, e.toString());
    }
  }

  @PreDestroy
  void close() {
    leases.shutdownNow();
  }
}

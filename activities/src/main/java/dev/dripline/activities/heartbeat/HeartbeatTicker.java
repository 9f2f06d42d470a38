package dev.dripline.activities.heartbeat;

import io.micronaut.context.annotation.Value;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The worker's one ticker for heartbeats: the long activity calls — a batch, a page of a run's
 * planning, a target's planning attempt — heartbeat to Temporal from its threads, because the code
 * they run (a definition's) cannot be asked to. A tick is short — the SDK's heartbeat, which is
 * thread-safe and throttles what it sends, and for a batch the checks that may fence it — so one
 * small pool serves every call; work that waits on the database, such as renewing a batch's lease,
 * runs on threads of its own so that it never delays a heartbeat. Threads: {@code
 * dripline.worker.heartbeat-threads} (default 2), daemons.
 */
@Singleton
public class HeartbeatTicker {
  private final ScheduledExecutorService pool;

  public HeartbeatTicker(@Value("${dripline.worker.heartbeat-threads:2}") int threads) {
    AtomicInteger count = new AtomicInteger();
    this.pool =
        Executors.newScheduledThreadPool(
            Math.max(1, threads),
            runnable -> {
              Thread thread = new Thread(runnable, "dripline-heartbeat-" + count.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
  }

  /**
   * Runs {@code tick} every {@code millis} milliseconds, the first time after one period, until the
   * returned future is cancelled (the call it heartbeats ends). {@code tick} catches its own
   * failures: one that throws is not run again.
   */
  public ScheduledFuture<?> every(long millis, Runnable tick) {
    return pool.scheduleAtFixedRate(tick, millis, millis, TimeUnit.MILLISECONDS);
  }

  @PreDestroy
  void close() {
    pool.shutdownNow();
  }
}

package dev.dripline.activities.targets;

import dev.dripline.runtime.config.TargetConfig;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.targets.TargetLine;
import dev.dripline.workflows.targets.TargetWorkflowIds;
import io.temporal.client.WorkflowClient;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wakes target workflows (the {@code wake} signal) so they look at their record now rather than at
 * their next poll: best effort, off the caller's thread, as each of them polls anyway.
 */
@Singleton
class TargetWakeups {
  private static final Logger LOG = LoggerFactory.getLogger(TargetWakeups.class);

  private final WorkflowClient client;
  private final DataTransactions transactions;
  private final TargetLine line;
  private final TargetConfig targets;

  /** Wake-ups, sent off the activity's thread. */
  private final ExecutorService wakeups =
      Executors.newSingleThreadExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "dripline-target-wakeups");
            thread.setDaemon(true);
            return thread;
          });

  TargetWakeups(
      WorkflowClient client, DataTransactions transactions, TargetLine line, TargetConfig targets) {
    this.client = client;
    this.transactions = transactions;
    this.line = line;
    this.targets = targets;
  }

  @PreDestroy
  void close() {
    wakeups.shutdownNow();
  }

  /** Wakes one target's workflow: best effort, off the caller's thread. */
  void wake(String name) {
    try {
      wakeups.execute(
          () -> {
            try {
              signalWake(name);
            } catch (RuntimeException e) {
              LOG.debug("Waking target {} failed: {}", name, e.toString());
            }
          });
    } catch (RejectedExecutionException e) {
      LOG.debug("Not waking target {}: shutting down", name);
    }
  }

  /** Sends {@code wake} to one target's workflow, on the caller's thread. */
  private void signalWake(String name) {
    client.newUntypedWorkflowStub(TargetWorkflowIds.forTarget(name)).signal("wake");
  }

  /**
   * Wakes the targets that free capacity serves now, after this target released its slot: they need
   * not wait for their next poll. Best effort, off the caller's thread.
   */
  void wakeNextInLine() {
    try {
      wakeups.execute(
          () -> {
            try {
              List<String> next =
                  transactions.inTransaction(
                      connection ->
                          line.served(targets.globalMaxBackfills(), targets.groupMaxBackfills()));
              for (String name : next) {
                signalWake(name);
              }
            } catch (RuntimeException e) {
              // Each of them polls anyway.
              LOG.debug("Waking the targets next in line failed: {}", e.toString());
            }
          });
    } catch (RejectedExecutionException e) {
      LOG.debug("Not waking the targets next in line: shutting down");
    }
  }
}

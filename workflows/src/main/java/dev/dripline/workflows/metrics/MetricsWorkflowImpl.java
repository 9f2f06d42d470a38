package dev.dripline.workflows.metrics;

import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ActivityFailure;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * Runs {@link MetricsActivities#snapshot} every interval, forever. A snapshot that keeps failing is
 * logged and skipped: the next tick tries again, so a database outage never ends the workflow; the
 * gauges stay at their last stored values meanwhile, and {@code
 * dripline_metrics_snapshot_age_seconds} says how old those are.
 */
public class MetricsWorkflowImpl implements MetricsWorkflow {
  private static final Logger log = Workflow.getLogger(MetricsWorkflowImpl.class);

  /** Snapshots per execution before continuing as new, to keep history bounded. */
  static final int MAX_SNAPSHOTS_PER_EXECUTION = 200;

  /** Used when the input carries no usable interval. */
  static final long DEFAULT_INTERVAL_MILLIS = 15_000;

  private final MetricsActivities metrics =
      Workflow.newActivityStub(
          MetricsActivities.class,
          ActivityOptions.newBuilder()
              .setStartToCloseTimeout(Duration.ofMinutes(1))
              .setSummary("compute and store the PostgreSQL-derived gauges")
              .setRetryOptions(
                  RetryOptions.newBuilder()
                      .setInitialInterval(Duration.ofSeconds(1))
                      .setBackoffCoefficient(2)
                      .setMaximumInterval(Duration.ofSeconds(30))
                      // Bounded: a later tick is as good as a late retry, and the loop stays on
                      // time.
                      .setMaximumAttempts(5)
                      .build())
              .build());

  @Override
  public void run(MetricsInput input) {
    long interval =
        input != null && input.intervalMillis() > 0
            ? input.intervalMillis()
            : DEFAULT_INTERVAL_MILLIS;
    for (int snapshots = 0; ; ) {
      try {
        int series = metrics.snapshot();
        Workflow.setCurrentDetails(
            "last snapshot wrote " + series + " series; every " + interval + " ms");
      } catch (ActivityFailure failure) {
        log.warn("metrics snapshot failed; the next tick tries again", failure);
        Workflow.setCurrentDetails("last snapshot failed; every " + interval + " ms");
      }
      snapshots++;
      Workflow.sleep(Duration.ofMillis(interval));
      if (snapshots >= MAX_SNAPSHOTS_PER_EXECUTION
          || Workflow.getInfo().isContinueAsNewSuggested()) {
        Workflow.await(Workflow::isEveryHandlerFinished);
        log.info("metrics: continuing as new after {} snapshots", snapshots);
        Workflow.continueAsNew(new MetricsInput(interval));
      }
    }
  }
}

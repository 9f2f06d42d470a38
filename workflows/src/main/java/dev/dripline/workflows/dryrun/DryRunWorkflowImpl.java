package dev.dripline.workflows.dryrun;

import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.workflow.Workflow;
import java.time.Duration;

/**
 * Calls {@link DryRunActivities#plan} once, retried — on a worker that does not host the
 * definition, or after a lost worker — until the execution's timeout, which is the API's wait.
 */
public class DryRunWorkflowImpl implements DryRunWorkflow {
  /** The activity's bound when the execution has no timeout (a start by hand). */
  static final Duration DEFAULT_BOUND = Duration.ofSeconds(30);

  @Override
  public DryRunAnswer plan(DryRunRequest request) {
    Duration bound = Workflow.getInfo().getWorkflowExecutionTimeout();
    if (bound == null || bound.isZero() || bound.isNegative()) {
      bound = DEFAULT_BOUND;
    }
    DryRunActivities activities =
        Workflow.newActivityStub(
            DryRunActivities.class,
            ActivityOptions.newBuilder()
                .setScheduleToCloseTimeout(bound)
                .setStartToCloseTimeout(bound)
                .setSummary("plan a dry run of " + request.backfill())
                .setRetryOptions(
                    RetryOptions.newBuilder()
                        // Short: the API is waiting, and a worker that hosts the definition may
                        // be polling beside one that does not.
                        .setInitialInterval(Duration.ofMillis(200))
                        .setBackoffCoefficient(2)
                        .setMaximumInterval(Duration.ofSeconds(2))
                        .setMaximumAttempts(0)
                        .build())
                .build());
    return activities.plan(request);
  }
}

package dev.dripline.workflows.retention;

import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * Calls {@link PurgeActivities#purge} until it reports nothing more to do, continuing as new after
 * {@link #MAX_CALLS_PER_EXECUTION} calls so that its history stays small however much is due. A
 * failing call is retried without limit (a database outage waits), with the progress its heartbeats
 * recorded.
 */
public class PurgeWorkflowImpl implements PurgeWorkflow {
  private static final Logger log = Workflow.getLogger(PurgeWorkflowImpl.class);

  /** Purge calls per execution before continuing as new. */
  static final int MAX_CALLS_PER_EXECUTION = 100;

  /** How long one call purges before it hands back (well inside its start-to-close timeout). */
  static final PurgeRequest CALL = new PurgeRequest(Duration.ofMinutes(1).toMillis());

  private final PurgeActivities purge =
      Workflow.newActivityStub(
          PurgeActivities.class,
          ActivityOptions.newBuilder()
              .setStartToCloseTimeout(Duration.ofMinutes(5))
              .setHeartbeatTimeout(Duration.ofSeconds(30))
              .setSummary("purge what the retention no longer keeps, in bounded deletes")
              .setRetryOptions(
                  RetryOptions.newBuilder()
                      .setInitialInterval(Duration.ofSeconds(1))
                      .setBackoffCoefficient(2)
                      .setMaximumInterval(Duration.ofMinutes(1))
                      .build())
              .build());

  @Override
  public PurgeReport run() {
    PurgeReport total = PurgeReport.NONE;
    for (int calls = 1; ; calls++) {
      PurgeReport report = purge.purge(CALL);
      total = total.plus(report);
      Workflow.setCurrentDetails(
          total.rows() + " rows purged (" + total.deletedRunBatches() + " of deleted runs)");
      if (!report.more()) {
        return total;
      }
      if (calls >= MAX_CALLS_PER_EXECUTION || Workflow.getInfo().isContinueAsNewSuggested()) {
        Workflow.await(Workflow::isEveryHandlerFinished);
        log.info("purge: continuing as new after {} calls, {} rows", calls, total.rows());
        Workflow.continueAsNew();
      }
    }
  }
}

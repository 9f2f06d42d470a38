package dev.dripline.bench;

import io.temporal.activity.ActivityOptions;
import io.temporal.workflow.Async;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowSemaphore;
import java.time.Duration;

/**
 * What W1's baseline does, exactly: one execution acquires a permit of a {@link WorkflowSemaphore}
 * of {@code cap} permits, schedules one {@link NoopActivities#noop} (default retry policy,
 * start-to-close 1 min) and releases the permit when the activity's promise completes; after {@code
 * perExecution} activities (or when the server suggests continue-as-new) it stops scheduling, waits
 * for its in-flight activities to finish (drain) and continues as new with the count done. The same
 * drain-then-continue shape as Dripline's run engine, without any database.
 */
public class BareLoopWorkflowImpl implements BareLoopWorkflow {
  private final NoopActivities activities =
      Workflow.newActivityStub(
          NoopActivities.class,
          ActivityOptions.newBuilder().setStartToCloseTimeout(Duration.ofMinutes(1)).build());

  private int inFlight;

  @Override
  public long run(Input input) {
    WorkflowSemaphore slots = Workflow.newWorkflowSemaphore(input.cap());
    long next = input.done();
    int startedHere = 0;
    while (next < input.total()
        && startedHere < input.perExecution()
        && !Workflow.getInfo().isContinueAsNewSuggested()) {
      slots.acquire();
      long index = next++;
      startedHere++;
      inFlight++;
      Async.procedure(activities::noop, index)
          .handle(
              (value, failure) -> {
                inFlight--;
                slots.release();
                return null;
              });
    }
    Workflow.await(() -> inFlight == 0);
    if (next < input.total()) {
      Workflow.continueAsNew(new Input(input.total(), input.cap(), next, input.perExecution()));
    }
    return next;
  }
}

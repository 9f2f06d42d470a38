package dev.dripline.workflows.targets;

import dev.dripline.workflows.run.BackfillRunWorkflow;
import dev.dripline.workflows.run.CapAnswer;
import dev.dripline.workflows.run.CapChange;
import dev.dripline.workflows.run.CapUpdate;
import dev.dripline.workflows.run.RetryAnswer;
import dev.dripline.workflows.run.RetryRequest;
import dev.dripline.workflows.run.RunOutcome;
import dev.dripline.workflows.run.RunProgressView;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.RunWorkflowInput;
import dev.dripline.workflows.run.SignalOrigin;

/**
 * Stands in for the run engine as the target workflow's child. The target never awaits its child
 * (it observes the run's record through {@link FakeTargetStore}), so this one just completes.
 */
public class FakeRunWorkflow implements BackfillRunWorkflow {
  @Override
  public RunOutcome run(RunWorkflowInput input) {
    return new RunOutcome(RunStatus.COMPLETED, 0);
  }

  @Override
  public void stop(SignalOrigin origin) {}

  @Override
  public void retry() {}

  @Override
  public void pause(SignalOrigin origin) {}

  @Override
  public void resume(SignalOrigin origin) {}

  @Override
  public void setMaxParallelBatches(CapChange change) {}

  @Override
  public RetryAnswer retryRun(RetryRequest request) {
    return new RetryAnswer(0, "fake", false);
  }

  @Override
  public void validateRetryRun(RetryRequest request) {}

  @Override
  public CapAnswer changeCap(CapUpdate update) {
    return new CapAnswer(null, null, "fake", false);
  }

  @Override
  public void validateChangeCap(CapUpdate update) {}

  @Override
  public RunProgressView progress() {
    return null;
  }
}

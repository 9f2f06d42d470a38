package dev.dripline.target;

import dev.dripline.run.BackfillRunWorkflow;
import dev.dripline.run.CapChange;
import dev.dripline.run.RunOutcome;
import dev.dripline.run.RunProgressView;
import dev.dripline.run.RunStatus;
import dev.dripline.run.RunWorkflowInput;

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
  public void stop() {}

  @Override
  public void retry() {}

  @Override
  public void pause() {}

  @Override
  public void resume() {}

  @Override
  public void setMaxParallelBatches(CapChange change) {}

  @Override
  public RunProgressView progress() {
    return null;
  }
}

package dev.dripline.workflows.run;

import io.temporal.workflow.Workflow;

/**
 * The home of the change ids of {@link BackfillRunWorkflowImpl}'s {@code Workflow.getVersion}
 * calls. None is open: every change made before release 0.1.0 was folded into the code, since no
 * execution of a release began before it.
 *
 * <p>A change to the commands the workflow emits, after 0.1.0, gets a constant here: the id, with a
 * Javadoc that says what the change does and where it is asked. The rules are pure ({@link
 * RunTransitions}), so the engine ({@link RunEngine}) asks Temporal through {@link #has} at the
 * point of the command sequence where the new behaviour first differs, and passes the answer to the
 * rule that depends on it. An id, once released, stays (never renamed or removed) while an
 * execution that recorded its marker, or began before it, may still be running; it is folded when
 * no supported release can have such an execution.
 */
final class RunWorkflowVersions {

  /**
   * Whether this execution has change {@code changeId}: true in an execution that begins with it
   * (Temporal records the marker) and when replaying a history that recorded it; false when
   * replaying one from before it. Each call is a command of the workflow: where it is asked is part
   * of the change.
   */
  static boolean has(String changeId) {
    return Workflow.getVersion(changeId, Workflow.DEFAULT_VERSION, 1) != Workflow.DEFAULT_VERSION;
  }

  private RunWorkflowVersions() {}
}

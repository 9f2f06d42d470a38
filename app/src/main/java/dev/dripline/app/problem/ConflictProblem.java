package dev.dripline.app.problem;

import io.micronaut.core.annotation.Nullable;

/** The request does not fit the resource's current state (e.g. stopping a finished run): 409. */
public final class ConflictProblem extends ProblemException {
  private static final long serialVersionUID = 1L;

  private final Long existingRunId;

  public ConflictProblem(String detail) {
    this(detail, null);
  }

  /**
   * @param existingRunId the active run a duplicate creation collided with, or {@code null}
   */
  public ConflictProblem(String detail, @Nullable Long existingRunId) {
    super(detail);
    this.existingRunId = existingRunId;
  }

  @Override
  public Problem toProblem() {
    return new Problem(
        Problem.TYPE_BASE + "conflict", "Conflict", 409, getMessage(), null, existingRunId);
  }
}

package dev.dripline.app.problem;

/**
 * A request that is valid but cannot be carried out as asked (422): a dry run whose definition
 * fails to plan.
 */
public final class UnprocessableProblem extends ProblemException {
  private static final long serialVersionUID = 1L;

  public UnprocessableProblem(String detail) {
    super(detail);
  }

  @Override
  public Problem toProblem() {
    return new Problem(
        Problem.TYPE_BASE + "unprocessable",
        "Unprocessable request",
        422,
        getMessage(),
        null,
        null);
  }
}

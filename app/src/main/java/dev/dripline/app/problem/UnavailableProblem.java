package dev.dripline.app.problem;

/** A dependency (Temporal) did not answer; nothing was left half-written: 503. */
public final class UnavailableProblem extends ProblemException {
  private static final long serialVersionUID = 1L;

  public UnavailableProblem(String detail, Throwable cause) {
    super(detail, cause);
  }

  @Override
  public Problem toProblem() {
    return new Problem(
        Problem.TYPE_BASE + "unavailable", "Service unavailable", 503, getMessage(), null, null);
  }
}

package dev.dripline.app.problem;

/** The caller is known but its role may not do this (a viewer changing something): 403. */
public final class ForbiddenProblem extends ProblemException {
  private static final long serialVersionUID = 1L;

  public ForbiddenProblem(String detail) {
    super(detail);
  }

  /** A read-only credential sent a request that may change something. */
  public static ForbiddenProblem readOnly(String credential, String method) {
    return new ForbiddenProblem(
        "the "
            + credential
            + " token may only read (GET, HEAD); "
            + method
            + " needs the operator token (DRIPLINE_OPERATOR_TOKEN)");
  }

  @Override
  public Problem toProblem() {
    return new Problem(Problem.TYPE_BASE + "forbidden", "Forbidden", 403, getMessage(), null, null);
  }
}

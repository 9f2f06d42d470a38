package dev.dripline.app.problem;

/** The addressed resource does not exist: 404. */
public final class NotFoundProblem extends ProblemException {
  private static final long serialVersionUID = 1L;

  public NotFoundProblem(String detail) {
    super(detail);
  }

  /** No run with the given id (as written in the path, which may not even be a number). */
  public static NotFoundProblem run(Object id) {
    return new NotFoundProblem("no run with id " + abbreviated(id));
  }

  /** No target with the given name. */
  public static NotFoundProblem target(String name) {
    return new NotFoundProblem("no target named " + abbreviated(name));
  }

  @Override
  public Problem toProblem() {
    return new Problem(Problem.TYPE_BASE + "not-found", "Not found", 404, getMessage(), null, null);
  }
}

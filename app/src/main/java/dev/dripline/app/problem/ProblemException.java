package dev.dripline.app.problem;

/**
 * A failure the API answers with a problem document of a known kind. Services throw the subclasses;
 * {@link ProblemExceptionHandler} is the one place that turns them into responses.
 */
public abstract sealed class ProblemException extends RuntimeException
    permits ValidationProblem,
        NotFoundProblem,
        ConflictProblem,
        UnavailableProblem,
        UnprocessableProblem {
  private static final long serialVersionUID = 1L;

  protected ProblemException(String detail) {
    super(detail);
  }

  protected ProblemException(String detail, Throwable cause) {
    super(detail, cause);
  }

  /** The problem document answering this failure. */
  public abstract Problem toProblem();

  /**
   * Client input as quoted in a detail: whole if short, else its start, so a detail stays readable
   * whatever was sent.
   */
  protected static String abbreviated(Object input) {
    String text = String.valueOf(input);
    return text.length() <= 100 ? text : text.substring(0, 100) + "… (" + text.length() + " chars)";
  }
}

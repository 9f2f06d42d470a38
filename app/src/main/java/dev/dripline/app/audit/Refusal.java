package dev.dripline.app.audit;

/**
 * An exception, other than a problem, that refuses a request (the dashboard's refusal pages). A
 * call that throws one is recorded as rejected with {@link #statusCode} and the message, unless
 * {@link #ofTheCaller}: the caller was refused before any action was considered (no session, a form
 * token missing or wrong), which is recorded nowhere, as the API's 401 and 403 are not.
 */
public interface Refusal {
  /** The status answered. */
  int statusCode();

  /** Why. */
  String getMessage();

  /** Whether the caller rather than the action was refused: nothing is recorded. */
  boolean ofTheCaller();
}

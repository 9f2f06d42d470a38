package dev.dripline.activities.run;

/**
 * Error texts as stored on run and batch rows: bounded, so a definition throwing a huge message
 * cannot bloat a row (or an activity failure payload).
 */
public final class ErrorText {
  /** Longest error text kept, in characters. */
  static final int MAX_LENGTH = 4000;

  private ErrorText() {}

  /** {@code SimpleName: message}, the form operators see for a failed attempt. */
  public static String of(Throwable failure) {
    String message = failure.getMessage();
    String text =
        message == null
            ? failure.getClass().getSimpleName()
            : failure.getClass().getSimpleName() + ": " + message;
    return truncate(text);
  }

  public static String truncate(String text) {
    if (text == null || text.length() <= MAX_LENGTH) {
      return text;
    }
    return text.substring(0, MAX_LENGTH - 1) + "…";
  }
}

package dev.dripline.spi;

/**
 * Thrown by a definition when retrying cannot help (bad data, impossible options): the batch, or
 * the planning, fails at once instead of being retried.
 */
public class PermanentBackfillException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public PermanentBackfillException(String message) {
    super(message);
  }

  public PermanentBackfillException(String message, Throwable cause) {
    super(message, cause);
  }
}

package dev.dripline.examples;

/**
 * A failure injected through {@code example_faults}. It is deliberately an ordinary (retryable)
 * exception, not a {@link dev.dripline.spi.PermanentBackfillException}: the engine must keep
 * retrying it, so that deleting the fault row heals the run or target.
 */
public class InjectedFaultException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public InjectedFaultException(String message) {
    super(message);
  }
}

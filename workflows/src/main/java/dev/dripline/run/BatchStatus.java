package dev.dripline.run;

/**
 * Lifecycle of a batch. A batch holds a slot of its run's cap while {@link #ENQUEUED} or {@link
 * #RUNNING}.
 */
public enum BatchStatus {
  PENDING,
  ENQUEUED,
  RUNNING,
  COMPLETED,
  FAILED,
  STOPPED;

  public String wire() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  public static BatchStatus fromWire(String value) {
    return valueOf(value.toUpperCase(java.util.Locale.ROOT));
  }

  public boolean holdsSlot() {
    return this == ENQUEUED || this == RUNNING;
  }
}

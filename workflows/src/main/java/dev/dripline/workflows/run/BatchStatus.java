package dev.dripline.workflows.run;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

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

  @JsonValue
  public String wire() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  @JsonCreator
  public static BatchStatus fromWire(String value) {
    return valueOf(value.toUpperCase(java.util.Locale.ROOT));
  }

  public boolean holdsSlot() {
    return this == ENQUEUED || this == RUNNING;
  }
}

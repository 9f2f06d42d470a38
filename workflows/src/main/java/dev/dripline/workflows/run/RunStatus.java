package dev.dripline.workflows.run;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * Lifecycle of a run. {@link #COMPLETED}, {@link #FAILED} and {@link #STOPPED} are terminal; a run
 * in {@link #PENDING}, {@link #RUNNING} or {@link #PAUSED} is active.
 */
public enum RunStatus {
  PENDING,
  RUNNING,
  PAUSED,
  COMPLETED,
  FAILED,
  STOPPED;

  /** The lower-case name used in the API, the database, search attributes and payloads. */
  @JsonValue
  public String wire() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  @JsonCreator
  public static RunStatus fromWire(String value) {
    return valueOf(value.toUpperCase(java.util.Locale.ROOT));
  }

  public boolean isTerminal() {
    return this == COMPLETED || this == FAILED || this == STOPPED;
  }

  public boolean isActive() {
    return !isTerminal();
  }
}

package dev.dripline.workflows.targets;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** Lifecycle of a target (spec §2, §4). */
public enum TargetState {
  /** Waiting for its next planning attempt (and for capacity). Holds no capacity slot. */
  PENDING_BACKFILL,
  /** Its backfill run is planned or running. Holds a capacity slot. */
  BACKFILLING,
  /** Backfilled: its live batches are applied in arrival order. */
  PRIMED,
  /** Cannot make progress without an operator's replan. */
  NEEDS_RESYNC;

  /** The lower-case name used in the API, the database, metrics labels and payloads. */
  @JsonValue
  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  @JsonCreator
  public static TargetState fromWire(String value) {
    return valueOf(value.toUpperCase(Locale.ROOT));
  }
}

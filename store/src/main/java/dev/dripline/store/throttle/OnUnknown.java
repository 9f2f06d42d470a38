package dev.dripline.store.throttle;

/** What an unknown reading of a check means for the runs it applies to. */
public enum OnUnknown {
  /** Unknown holds, as if over: the safe default when the database cannot be seen. */
  HOLD,
  /** Unknown lets runs go on. */
  PROCEED
}

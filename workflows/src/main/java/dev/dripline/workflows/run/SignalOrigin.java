package dev.dripline.workflows.run;

/**
 * Who in Dripline sent a run's {@code stop}, {@code pause} or {@code resume} signal: the API, which
 * records the action in the audit trail itself, or the engine stopping a target's runs. A signal
 * without one (its input absent or {@code null}: the Temporal CLI's {@code temporal workflow
 * signal} without {@code --input}, the Web UI's) was sent by someone outside Dripline, and the
 * run's workflow records it in the audit trail as sent by {@code temporal} (O4).
 *
 * @param sender who sent it, e.g. {@code api}
 */
public record SignalOrigin(String sender) {
  /** The API's signals; the API records them in the audit trail. */
  public static final SignalOrigin API = new SignalOrigin("api");

  /** The engine's own: the stop of a target's runs when the target is deleted or replanned. */
  public static final SignalOrigin ENGINE = new SignalOrigin("engine");

  /** Whether {@code origin} names a sender in Dripline; {@code null} (no input) does not. */
  static boolean fromDripline(SignalOrigin origin) {
    return origin != null && origin.sender() != null && !origin.sender().isBlank();
  }
}

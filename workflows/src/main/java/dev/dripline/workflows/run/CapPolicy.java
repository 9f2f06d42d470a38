package dev.dripline.workflows.run;

/** The effective cap of a run: the smallest of the definition's, the run's and the engine's. */
public final class CapPolicy {
  private CapPolicy() {}

  /**
   * @param definitionCap the definition's cap, or {@code null} for none
   * @param requestedCap the run's cap, or {@code null} for none
   * @param engineSafetyCap the engine's ceiling, always present
   */
  public static int effective(Integer definitionCap, Integer requestedCap, int engineSafetyCap) {
    int cap = engineSafetyCap;
    if (definitionCap != null) {
      cap = Math.min(cap, definitionCap);
    }
    if (requestedCap != null) {
      cap = Math.min(cap, requestedCap);
    }
    return Math.max(1, cap);
  }
}

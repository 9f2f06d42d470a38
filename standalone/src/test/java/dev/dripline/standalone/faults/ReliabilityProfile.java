package dev.dripline.standalone.faults;

/**
 * Sizes of the reliability tests: the FULL variant when {@code DRIPLINE_RELIABILITY=full} (what
 * {@code bin/dripline-reliability} runs and docs/reliability.md describes), else a SHORT variant
 * for the normal suite and CI.
 */
final class ReliabilityProfile {
  private ReliabilityProfile() {}

  static boolean full() {
    return "full".equalsIgnoreCase(System.getenv().getOrDefault("DRIPLINE_RELIABILITY", ""));
  }

  static String name() {
    return full() ? "FULL" : "SHORT";
  }
}

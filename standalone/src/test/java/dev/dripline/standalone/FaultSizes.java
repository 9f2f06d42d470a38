package dev.dripline.standalone;

/**
 * Sizes of the fault-injection cases F1–F3: FULL when {@code DRIPLINE_RELIABILITY=full} (what issue
 * 6 asks for: 2,000 batches, 10 kills, a 30 s PostgreSQL outage; run by {@code
 * bin/dripline-reliability}), SHORT otherwise, for the normal test suite and CI.
 *
 * @param batches batches of each run
 * @param kills worker kills in F1 (per run)
 * @param outageSeconds how long F3 keeps PostgreSQL down
 * @param temporalDownSeconds how long F2 keeps the Temporal dev server down
 */
record FaultSizes(String name, int batches, int kills, int outageSeconds, int temporalDownSeconds) {
  static final int CAP = 8;

  static FaultSizes current() {
    return "full".equalsIgnoreCase(System.getenv("DRIPLINE_RELIABILITY"))
        ? new FaultSizes("full", 2000, 10, 30, 15)
        : new FaultSizes("short", 300, 3, 10, 5);
  }
}

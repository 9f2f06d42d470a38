package dev.dripline.bench;

/** W2: see docs/benchmarks.md. */
final class W2Workload {
  private final BenchConfig config;
  private final Services services;

  W2Workload(BenchConfig config, Services services) {
    this.config = config;
    this.services = services;
  }

  String run() throws Exception {
    throw new UnsupportedOperationException("W2 is not implemented yet");
  }
}

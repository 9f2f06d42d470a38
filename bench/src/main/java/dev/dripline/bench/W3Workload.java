package dev.dripline.bench;

/** W3: see docs/benchmarks.md. */
final class W3Workload {
  private final BenchConfig config;
  private final Services services;

  W3Workload(BenchConfig config, Services services) {
    this.config = config;
    this.services = services;
  }

  String run() throws Exception {
    throw new UnsupportedOperationException("W3 is not implemented yet");
  }
}

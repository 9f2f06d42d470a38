package dev.dripline.bench;

/** W4: see docs/benchmarks.md. */
final class W4Workload {
  private final BenchConfig config;
  private final Services services;

  W4Workload(BenchConfig config, Services services) {
    this.config = config;
    this.services = services;
  }

  String run() throws Exception {
    throw new UnsupportedOperationException("W4 is not implemented yet");
  }
}

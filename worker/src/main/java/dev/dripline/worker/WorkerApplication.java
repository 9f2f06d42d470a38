package dev.dripline.worker;

import io.micronaut.runtime.Micronaut;

/**
 * Entry point of a worker-only process: hosts the Temporal worker with every registered backfill
 * definition, and serves {@code /health} and {@code /prometheus} on {@code
 * DRIPLINE_WORKER_HTTP_PORT} (default 8081) so it can run beside the app on one host.
 */
public final class WorkerApplication {
  private WorkerApplication() {}

  public static void main(String[] args) {
    Micronaut.build(args).mainClass(WorkerApplication.class).defaultEnvironments("worker").start();
  }
}

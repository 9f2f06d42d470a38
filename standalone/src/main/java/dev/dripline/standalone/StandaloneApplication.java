package dev.dripline.standalone;

import io.micronaut.runtime.Micronaut;

/**
 * Dripline's HTTP API and a worker in one JVM, for local use. In production the app and the workers
 * run as separate processes ({@code AppApplication}, {@code WorkerApplication}) and scale apart.
 */
public final class StandaloneApplication {
  private StandaloneApplication() {}

  public static void main(String[] args) {
    Micronaut.build(args).mainClass(StandaloneApplication.class).start();
  }
}

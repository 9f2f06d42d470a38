package dev.dripline.app;

import io.micronaut.runtime.Micronaut;

/**
 * Entry point of the HTTP API process. It runs in the {@code api} environment and hosts no worker:
 * the catalogue it validates against is read from PostgreSQL, never from user backfill code.
 */
public final class AppApplication {
  private AppApplication() {}

  public static void main(String[] args) {
    Micronaut.build(args).mainClass(AppApplication.class).defaultEnvironments("api").start();
  }
}

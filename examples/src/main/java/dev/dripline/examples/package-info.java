/**
 * The example backfills shipped with Dripline (spec §7): {@code example.sleep}, {@code
 * example.normalize-emails} and {@code example.copy-events}, their shared fault injection, the
 * sleep example's concurrency witness, and the {@link dev.dripline.examples.ExampleSeeder} that
 * fills their tables. They are demos, test fixtures and benchmark workloads at once.
 */
package dev.dripline.examples;

/**
 * Example backfill definitions (spec §7) written as a backfill author writes theirs: on the SPI and
 * plain JDBC alone, listed for {@link java.util.ServiceLoader} in {@code
 * META-INF/services/dev.dripline.spi.BackfillDefinition}. Beside them: their shared fault
 * injection, the concurrency witness of {@code example.sleep} and {@code example.order-lines}, and
 * the {@link dev.dripline.examples.ExampleSeeder} that fills their tables. They are demos, test
 * fixtures and benchmark workloads; no product jar or image carries them.
 */
package dev.dripline.examples;

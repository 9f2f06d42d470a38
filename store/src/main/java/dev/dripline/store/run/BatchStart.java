package dev.dripline.store.run;

import dev.dripline.spi.Key;
import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * A batch an attempt marked running, with what it needs to run it ({@link
 * BatchRepository#startHead} and the chain's claims).
 *
 * @param number its number in the run
 * @param startKey first key of its range
 * @param endKey last key of its range
 * @param size keys in the range
 * @param options the run's options, as JSON text
 * @param pool the run's pool, null if it draws from none
 */
@Introspected
public record BatchStart(
    int number, Key startKey, Key endKey, int size, String options, @Nullable String pool) {}

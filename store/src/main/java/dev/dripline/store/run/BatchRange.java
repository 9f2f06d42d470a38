package dev.dripline.store.run;

import dev.dripline.spi.Key;
import io.micronaut.core.annotation.Introspected;

/**
 * A batch's number and key range, as the workflow's claim hands it out ({@link
 * BatchRepository#claim}).
 *
 * @param number its number in the run
 * @param startKey first key of its range
 * @param endKey last key of its range
 * @param size keys in the range
 */
@Introspected
public record BatchRange(int number, Key startKey, Key endKey, int size) {}

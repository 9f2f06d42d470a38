package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;

/**
 * A batch's status and size ({@link BatchRepository#progress}).
 *
 * @param status its status, as stored
 * @param size keys in its range
 */
@Introspected
public record BatchProgress(String status, int size) {}

package dev.dripline.store.metrics;

import io.micronaut.core.annotation.Introspected;

/**
 * A count of rows sharing one value of a column (a {@code group by} of one column).
 *
 * @param value the column's value
 * @param count the rows that have it
 */
@Introspected
public record GroupCount(String value, long count) {}

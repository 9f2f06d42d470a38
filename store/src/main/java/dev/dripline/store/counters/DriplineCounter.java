package dev.dripline.store.counters;

import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;

/**
 * A row of {@code dripline_counters}: a named, ever-growing count kept by the engine (failed
 * planning attempts of targets).
 *
 * @param name the counter's name
 * @param value its count
 */
@MappedEntity("dripline_counters")
public record DriplineCounter(@Id String name, long value) {}

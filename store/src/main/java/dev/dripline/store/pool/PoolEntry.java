package dev.dripline.store.pool;

import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import java.time.Instant;

/**
 * A row of {@code pools} (P5, migration V21): a named cap on the batches in flight of every run
 * that draws from it.
 *
 * @param name the pool's name, as runs and definitions name it
 * @param size most batches of its runs that may hold a slot at once
 * @param createdAt when it was created
 * @param updatedAt when its size last changed
 */
@MappedEntity("pools")
public record PoolEntry(@Id String name, int size, Instant createdAt, Instant updatedAt) {}

package dev.dripline.store.pool;

import io.micronaut.core.annotation.Introspected;

/**
 * A pool with what draws from it now ({@link PoolRepository#list}).
 *
 * @param name the pool's name
 * @param size most batches of its runs that may hold a slot at once
 * @param inUse batches of its runs holding a slot now
 * @param waiting runs waiting in line for a slot ({@code dripline_pool_waiters}: running, not
 *     stopping, not held, with a pending batch)
 */
@Introspected
public record PoolView(String name, int size, long inUse, long waiting) {}

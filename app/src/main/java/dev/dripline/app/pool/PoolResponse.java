package dev.dripline.app.pool;

import dev.dripline.store.pool.PoolView;
import io.micronaut.serde.annotation.Serdeable;

/**
 * A pool as {@code GET /api/pools} shows it (P5).
 *
 * @param name the pool's name
 * @param size most batches of its runs that may hold a slot at once
 * @param inUse batches of its runs holding a slot now
 * @param waiting runs waiting in line for a slot
 */
@Serdeable
public record PoolResponse(String name, int size, long inUse, long waiting) {
  static PoolResponse of(PoolView pool) {
    return new PoolResponse(pool.name(), pool.size(), pool.inUse(), pool.waiting());
  }
}

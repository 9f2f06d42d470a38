package dev.dripline.store.pool;

import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.List;
import java.util.Optional;

/**
 * Table {@code pools} (P5): the API creates and resizes pools; the claim functions (migration V21)
 * read them under the pool row's lock. What is in use and who waits is computed, not stored: a pool
 * slot is a slot held by a batch of a run of the pool ({@code dripline_pool_holders}), a waiter a
 * run in {@code pool_waiters} that still counts ({@code dripline_pool_waiters}).
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface PoolRepository extends GenericRepository<PoolEntry, String> {
  /** A pool with its slots in use and its waiters, over the row {@code p}. */
  String POOL =
      "select p.name, p.size, dripline_pool_holders(p.name) as in_use,"
          + " (select count(*) from dripline_pool_waiters(p.name)) as waiting from pools p";

  /**
   * Creates pool {@code name} of {@code size} slots, or resizes it. A smaller size pre-empts
   * nothing: batches holding a slot finish, and no new one starts until the pool is under it.
   */
  @Query(
      "insert into pools (name, size) values (:name, :size)"
          + " on conflict (name) do update set size = excluded.size, updated_at = now()")
  void put(String name, int size);

  /** Every pool, by name. */
  @Query(POOL + " order by p.name")
  List<PoolView> list();

  /** Pool {@code name}, if it exists. */
  @Query(POOL + " where p.name = :name")
  Optional<PoolView> find(String name);
}

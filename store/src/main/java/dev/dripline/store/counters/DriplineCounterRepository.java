package dev.dripline.store.counters;

import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.Optional;

/**
 * Table {@code dripline_counters}: named counts that only grow, each added to in the transaction of
 * the event it counts, so a rolled-back event is not counted.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface DriplineCounterRepository extends GenericRepository<DriplineCounter, String> {
  /** Adds one to counter {@code name}, creating it at 1 if it does not exist yet (an upsert). */
  @Query(
      "insert into dripline_counters (name, value) values (:name, 1)"
          + " on conflict (name) do update set value = dripline_counters.value + 1")
  int increment(String name);

  /** Counter {@code name}'s count; empty if it does not exist. */
  @Query("select value from dripline_counters where name = :name")
  Optional<Long> value(String name);
}

package dev.dripline.store.throttle;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.List;
import java.util.Optional;

/**
 * Table {@code throttle_check_overrides}: thresholds changed at runtime. The API writes them; the
 * evaluator reads a check's override at each evaluation, so a change applies from the check's next
 * interval, and survives restarts.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface CheckOverrideRepository extends GenericRepository<CheckOverride, String> {

  Optional<CheckOverride> findByName(String name);

  /** Every override, by name. */
  @Query("select * from throttle_check_overrides order by name")
  List<CheckOverride> findAllOrdered();

  /**
   * Records a change of a check's limits: a {@code null} field keeps the override's previous value
   * (if any), so a PATCH changes only the fields it gives.
   */
  @Query(
      """
      insert into throttle_check_overrides (name, threshold, resume_below, changed_by)
      values (:name, :threshold, :resumeBelow, :changedBy)
      on conflict (name) do update set
        threshold = coalesce(excluded.threshold, throttle_check_overrides.threshold),
        resume_below = coalesce(excluded.resume_below, throttle_check_overrides.resume_below),
        changed_by = excluded.changed_by, changed_at = now()
      """)
  void change(
      String name, @Nullable Double threshold, @Nullable Double resumeBelow, String changedBy);

  /** Forgets a check's override (tests). */
  @Query("delete from throttle_check_overrides where name = :name")
  void deleteByName(String name);
}

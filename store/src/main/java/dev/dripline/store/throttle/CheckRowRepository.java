package dev.dripline.store.throttle;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Table {@code throttle_checks}. One evaluator writes a check's row at a time: it takes {@link
 * #tryLock} in the transaction that reads the previous row and records the next, so two workers
 * never evaluate a check at once nor record out of order.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface CheckRowRepository extends GenericRepository<CheckRow, String> {

  /**
   * Takes the check's advisory lock until the end of the transaction, if no other session holds it.
   */
  @Query("select pg_try_advisory_xact_lock(hashtext('dripline.throttle'), hashtext(:name))")
  boolean tryLock(String name);

  Optional<CheckRow> findByName(String name);

  /** Every check's last evaluation, by name. */
  @Query("select * from throttle_checks order by name")
  List<CheckRow> findAllOrdered();

  /**
   * Records an evaluation, replacing the check's previous one, with the backfills the check applies
   * to ({@code appliesTo}; empty for every backfill, stored as {@code NULL}).
   */
  @Query(
      """
      insert into throttle_checks
        (name, kind, value, threshold, resume_below, state, holding, since, evaluated_at, error,
         applies_to)
      values
        (:name, :kind, :value, :threshold, :resumeBelow, :state, :holding, :since, :evaluatedAt,
         :error, nullif(cast(:appliesTo as text[]), '{}'))
      on conflict (name) do update set
        kind = excluded.kind, value = excluded.value, threshold = excluded.threshold,
        resume_below = excluded.resume_below, state = excluded.state,
        holding = excluded.holding, since = excluded.since,
        evaluated_at = excluded.evaluated_at, error = excluded.error,
        applies_to = excluded.applies_to
      """)
  void record(
      String name,
      String kind,
      @Nullable Double value,
      double threshold,
      double resumeBelow,
      String state,
      boolean holding,
      Instant since,
      Instant evaluatedAt,
      @Nullable String error,
      String[] appliesTo);

  /**
   * Forgets every check not named in {@code names}: checks taken out of configuration.
   *
   * @return the number of rows deleted
   */
  @Query("delete from throttle_checks where not (name = any (cast(:names as text[])))")
  int deleteAllExcept(String[] names);

  /** Forgets a check (tests). */
  @Query("delete from throttle_checks where name = :name")
  void deleteByName(String name);
}

package dev.dripline.store.throttle;

import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.Optional;

/**
 * Table {@code throttle_brake}: the brake (P3), written by the API only. Its one row holds every
 * run through {@code dripline_run_holds} until it is deleted.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface BrakeRepository extends GenericRepository<BrakeRow, Boolean> {

  /** The brake, if it is on. */
  @Query("select * from throttle_brake")
  Optional<BrakeRow> current();

  /**
   * Puts the brake on, unless it is on already: then the existing hold (its reason, who and since)
   * stays as it was.
   */
  @Query(
      """
      insert into throttle_brake (reason, held_by) values (:reason, :heldBy)
      on conflict (id) do nothing
      """)
  void holdIfReleased(String reason, String heldBy);

  /** Takes the brake off; nothing if it is off. */
  @Query("delete from throttle_brake")
  void release();
}

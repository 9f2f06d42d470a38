package dev.dripline.store.migration;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.Test;

class SchemaMigrationTest {

  @Test
  void lockTimeoutDeadlockAndLostConnectionPass() {
    assertThat(SchemaMigration.passes(flyway(new SQLException("lock timeout", "55P03")))).isTrue();
    assertThat(SchemaMigration.passes(flyway(new SQLException("deadlock", "40P01")))).isTrue();
    assertThat(SchemaMigration.passes(flyway(new SQLException("refused", "08001")))).isTrue();
    assertThat(SchemaMigration.passes(flyway(new SQLTransientConnectionException("pool"))))
        .isTrue();
  }

  @Test
  void wrongSqlDoesNotPass() {
    assertThat(SchemaMigration.passes(flyway(new SQLException("no such column", "42703"))))
        .isFalse();
    assertThat(SchemaMigration.passes(new FlywayException("checksum mismatch"))).isFalse();
  }

  @Test
  void sqlStateIsTheFirstCauseThatHasOne() {
    SQLException withState = new SQLException("lock timeout", "55P03");
    FlywayException failure =
        new FlywayException("migration failed", new SQLException("wrapped", null, withState));

    assertThat(SchemaMigration.sqlState(failure)).isEqualTo("55P03");
    assertThat(SchemaMigration.sqlState(new FlywayException("no cause"))).isNull();
  }

  private static FlywayException flyway(Throwable cause) {
    return new FlywayException(
        "Migration failed", new FlywayException("Error while executing callback", cause));
  }
}

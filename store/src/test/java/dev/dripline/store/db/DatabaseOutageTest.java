package dev.dripline.store.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.junit.jupiter.api.Test;

class DatabaseOutageTest {
  @Test
  void connectionFailuresAreRecognisedThroughTheirCauses() {
    assertThat(DatabaseOutage.isConnectionFailure(new SQLException("refused", "08001"))).isTrue();
    assertThat(
            DatabaseOutage.isConnectionFailure(
                new IllegalStateException(
                    new DatabaseException(new SQLException("I/O error", "08006")))))
        .isTrue();
    assertThat(DatabaseOutage.isConnectionFailure(new SQLException("shutdown", "57P01"))).isTrue();
    assertThat(DatabaseOutage.isConnectionFailure(new SQLException("starting up", "57P03")))
        .isTrue();
    // HikariCP's timeout waiting for a connection while PostgreSQL is down.
    assertThat(
            DatabaseOutage.isConnectionFailure(
                new SQLTransientConnectionException("pool - Connection is not available")))
        .isTrue();
  }

  @Test
  void otherFailuresAreNot() {
    assertThat(DatabaseOutage.isConnectionFailure(new SQLException("duplicate", "23505")))
        .isFalse();
    assertThat(DatabaseOutage.isConnectionFailure(new SQLException("cancelled", "57014")))
        .isFalse();
    assertThat(DatabaseOutage.isConnectionFailure(new SQLException("no state"))).isFalse();
    assertThat(DatabaseOutage.isConnectionFailure(new IllegalStateException("busy"))).isFalse();
    assertThat(DatabaseOutage.isConnectionFailure(null)).isFalse();
  }
}

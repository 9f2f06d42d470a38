package dev.dripline.store.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

class DatabaseTest {

  /**
   * A pooled connection PostgreSQL dropped while committing: the commit fails with the server's
   * reason, and then, the pool having marked it broken, everything else says only "Connection is
   * closed" (HikariCP's words, without an SQLState).
   */
  private static Connection droppedAtCommit() {
    return (Connection)
        Proxy.newProxyInstance(
            DatabaseTest.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "getAutoCommit" -> true;
                  case "setAutoCommit" -> {
                    if (Boolean.TRUE.equals(args[0])) {
                      throw new SQLException("Connection is closed");
                    }
                    yield null;
                  }
                  case "commit" ->
                      throw new SQLException(
                          "FATAL: terminating connection due to administrator command", "57P01");
                  case "rollback" -> throw new SQLException("Connection is closed");
                  case "close" -> null;
                  default -> throw new UnsupportedOperationException(method.getName());
                });
  }

  @Test
  void aTransactionKeepsTheCauseOfItsFailureWhenCleaningUpFailsToo() {
    DataSource dataSource =
        (DataSource)
            Proxy.newProxyInstance(
                DatabaseTest.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, method, args) -> droppedAtCommit());
    Database database = new Database(dataSource);

    DatabaseException failure =
        catchThrowableOfType(
            DatabaseException.class, () -> database.inTransaction(connection -> "work done"));

    assertThat(failure.getCause()).hasMessageContaining("administrator command");
    assertThat(DatabaseOutage.isConnectionFailure(failure)).isTrue();
    assertThat(failure.getCause().getSuppressed()).hasSize(1);
  }
}

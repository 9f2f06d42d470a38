package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.testing.KeysBackfill;
import dev.dripline.spi.BackfillContext;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * A run's definition reaches Dripline's database through its context alone, as a plain Java
 * definition with no injection must.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class RunContextDataSourceIT {
  @Inject RunOptionsReader reader;
  @Inject KeysBackfill definition;

  @Test
  void aRunsContextGivesItsDefinitionDriplinesDatabase() throws Exception {
    BackfillContext context = reader.context(-7, definition, "{\"items\":3}");

    assertThat(context.dataSource()).isNotNull();
    try (Connection connection = context.dataSource().getConnection();
        Statement statement = connection.createStatement();
        ResultSet row = statement.executeQuery("select count(*) from runs where id = -7")) {
      assertThat(row.next()).isTrue();
      assertThat(row.getLong(1)).isZero();
    }
  }
}

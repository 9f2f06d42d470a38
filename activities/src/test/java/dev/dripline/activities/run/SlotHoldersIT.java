package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.store.db.Database;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The claims' count of a run's slot holders ({@code dripline_slot_holders}, migration V25) reads
 * the run's 16 counter rows ({@code run_key_counts.holders}), however many batches went through
 * {@code enqueued} and {@code running} since the last vacuum.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class SlotHoldersIT {
  @Inject RunFixtures fixtures;
  @Inject Database database;

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
  }

  @Test
  void theHoldersCountReadsTheRunsCounterRowsWhateverTheChurn() {
    long runId = fixtures.runningRun(3_000, 10);
    fixtures.batches(runId, 300, 10, "pending");
    // Every batch through the holding statuses; two still hold a slot.
    fixtures.update("update batches set status = 'enqueued' where run_id = ?", runId);
    fixtures.update("update batches set status = 'running' where run_id = ?", runId);
    fixtures.update(
        "update batches set status = 'completed' where run_id = ? and number > 2", runId);

    long[] read =
        database.withConnection(
            connection -> {
              long before = entriesRead(connection);
              long first = holders(connection, runId);
              long afterFirst = entriesRead(connection);
              long second = holders(connection, runId);
              long afterSecond = entriesRead(connection);
              return new long[] {first, second, afterFirst - before, afterSecond - afterFirst};
            });

    assertThat(read[0]).isEqualTo(2);
    assertThat(read[1]).isEqualTo(2);
    // Its 16 rows, and the entries of row versions that were not updated in place (HOT: 300
    // updates of one row in one transaction cannot be pruned while it runs), not yet known dead.
    assertThat(read[2]).as("entries the first count read").isLessThanOrEqualTo(32);
    assertThat(read[3]).as("entries the second count read").isLessThanOrEqualTo(32);
  }

  private static long holders(Connection connection, long runId) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet row = statement.executeQuery("select dripline_slot_holders(" + runId + ")")) {
      row.next();
      return row.getLong(1);
    }
  }

  /**
   * Index entries read from {@code run_key_counts_pkey} so far, this session's included: its counts
   * are flushed first ({@code pg_stat_force_next_flush}, at the end of the statement's transaction)
   * and the statistics snapshot dropped.
   */
  private static long entriesRead(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute("select pg_stat_force_next_flush()");
      statement.execute("select pg_stat_clear_snapshot()");
      try (ResultSet row =
          statement.executeQuery(
              "select idx_tup_read from pg_stat_user_indexes"
                  + " where indexrelname = 'run_key_counts_pkey'")) {
        row.next();
        return row.getLong(1);
      }
    }
  }
}

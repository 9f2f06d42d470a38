package dev.dripline.run;

import dev.dripline.db.Database;
import dev.dripline.registry.BackfillRegistry;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.PermanentBackfillException;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt at one batch, independent of Temporal's activity context so it can be called (and
 * tested) directly; {@link BatchActivitiesImpl} adds heartbeats around it.
 *
 * <p>Invariants: the definition runs only for a batch that holds a slot ({@code enqueued} or {@code
 * running}); a batch becomes {@code completed} at most once, and its size is added to the run's
 * {@code processed_keys} in the same transaction as that transition, so a repeated attempt never
 * counts a key twice. The batch is counted in {@code dripline_batches_finished_total} in that same
 * transaction, and its slot time recorded only when that transaction made the transition.
 */
@Singleton
public class BatchExecution {
  private static final Logger LOG = LoggerFactory.getLogger(BatchExecution.class);

  private final Database database;
  private final BackfillRegistry registry;
  private final RunOptionsReader optionsReader;
  private final BatchMetrics metrics;

  public BatchExecution(
      Database database,
      BackfillRegistry registry,
      RunOptionsReader optionsReader,
      BatchMetrics metrics) {
    this.database = database;
    this.registry = registry;
    this.optionsReader = optionsReader;
    this.metrics = metrics;
  }

  /** What the attempt needs from the batch row it marked running. */
  private record Started(KeyRange range, int size, String options) {}

  /**
   * Processes the batch unless it was completed already or no longer holds a slot.
   *
   * @throws ApplicationFailure of type {@link DriplineFailure#BATCH_PERMANENT} (non-retryable) or
   *     {@link DriplineFailure#BATCH_FAILED} (retryable) when the definition fails
   */
  public BatchResult process(BatchWork work) {
    BackfillDefinition definition = registry.require(work.backfill());
    long runId = work.runId();
    int number = work.batch().number();

    Started started = database.inTransaction(connection -> markRunning(connection, runId, number));
    if (started == null) {
      return database.withConnection(connection -> notStarted(connection, runId, number));
    }

    try {
      BackfillContext context = optionsReader.context(runId, definition, started.options());
      definition.processBatch(context, started.range());
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      String error = ErrorText.of(e);
      recordAttemptError(runId, number, error);
      if (e instanceof PermanentBackfillException) {
        throw ApplicationFailure.newNonRetryableFailureWithCause(
            error, DriplineFailure.BATCH_PERMANENT.name(), e);
      }
      throw ApplicationFailure.newFailureWithCause(error, DriplineFailure.BATCH_FAILED.name(), e);
    }

    BatchMetrics.Outcome completed =
        database.inTransaction(connection -> complete(connection, runId, number, started.size()));
    if (completed != null) {
      metrics.recordSlotTime(completed);
      return new BatchResult(BatchOutcome.COMPLETED, started.size());
    }
    // Lost its slot while running (run recovered or batch failed meanwhile): its keys are not
    // counted here; whoever holds the batch now will count them.
    return database.withConnection(connection -> notStarted(connection, runId, number));
  }

  private static Started markRunning(Connection connection, long runId, int number)
      throws SQLException {
    try (PreparedStatement update =
        connection.prepareStatement(
            "update batches b set status = 'running', attempts = b.attempts + 1,"
                + " started_at = coalesce(b.started_at, now())"
                + " from runs r where r.id = b.run_id"
                + " and b.run_id = ? and b.number = ? and b.status in ('enqueued', 'running')"
                + " returning b.start_key, b.end_key, b.size, r.options::text as options")) {
      update.setLong(1, runId);
      update.setInt(2, number);
      try (ResultSet rs = update.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        return new Started(
            new KeyRange(rs.getLong("start_key"), rs.getLong("end_key")),
            rs.getInt("size"),
            rs.getString("options"));
      }
    }
  }

  private static BatchResult notStarted(Connection connection, long runId, int number)
      throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement(
            "select status, size from batches where run_id = ? and number = ?")) {
      select.setLong(1, runId);
      select.setInt(2, number);
      try (ResultSet rs = select.executeQuery()) {
        if (rs.next() && BatchStatus.fromWire(rs.getString("status")) == BatchStatus.COMPLETED) {
          return new BatchResult(BatchOutcome.ALREADY_COMPLETED, rs.getInt("size"));
        }
        return new BatchResult(BatchOutcome.SKIPPED, 0);
      }
    }
  }

  /** The running → completed compare-and-set; null if the batch was not running any more. */
  private static BatchMetrics.Outcome complete(
      Connection connection, long runId, int number, int size) throws SQLException {
    BatchMetrics.Outcome outcome;
    try (PreparedStatement update =
        connection.prepareStatement(
            "update batches b set status = 'completed', finished_at = now(), error = null"
                + " from runs r where r.id = b.run_id"
                + " and b.run_id = ? and b.number = ? and b.status = 'running'"
                + " returning r.backfill, "
                + BatchMetrics.SLOT_SECONDS
                + " as slot_seconds")) {
      update.setLong(1, runId);
      update.setInt(2, number);
      try (ResultSet rs = update.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        outcome = BatchMetrics.Outcome.of(rs);
      }
    }
    try (PreparedStatement count =
        connection.prepareStatement(
            "update runs set processed_keys = processed_keys + ?, updated_at = now()"
                + " where id = ?")) {
      count.setLong(1, size);
      count.setLong(2, runId);
      count.executeUpdate();
    }
    BatchMetrics.countFinished(connection, outcome.backfill(), "completed", 1);
    return outcome;
  }

  /** Best effort: the error of the last attempt is what an operator sees while it retries. */
  private void recordAttemptError(long runId, int number, String error) {
    try {
      database.inTransaction(
          connection -> {
            try (PreparedStatement update =
                connection.prepareStatement(
                    "update batches set error = ?"
                        + " where run_id = ? and number = ? and status = 'running'")) {
              update.setString(1, error);
              update.setLong(2, runId);
              update.setInt(3, number);
              return update.executeUpdate();
            }
          });
    } catch (RuntimeException e) {
      LOG.warn("Could not record the error of batch {} of run {}", number, runId, e);
    }
  }
}

package dev.dripline.examples;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.TransactionalBackfillDefinition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/**
 * {@code example.normalize-emails}: real work — lower-cases and trims {@code example_users.email}.
 * The scope is users whose email is not already normalised; the batch re-evaluates it inside its id
 * range, so a batch run twice changes nothing the second time. Its batches write in Dripline's own
 * transaction ({@link TransactionalBackfillDefinition}): one commit per batch, writes and record.
 */
public class NormalizeEmailsBackfill implements TransactionalBackfillDefinition {
  public static final String NAME = "example.normalize-emails";

  /**
   * The scope query of {@link #keysAfter}: ids after {@code ?} whose email is not normalised, in
   * order, at most {@code ?} of them. Public so the benchmark's baselines run the same statement.
   */
  public static final String KEYS_AFTER_SQL =
      "select id from example_users"
          + " where id > ? and email <> lower(trim(email)) order by id limit ?";

  /**
   * The statement of {@link #processBatch}: normalises the emails of ids {@code ?..?} (inclusive)
   * that are not normalised yet. Public so the benchmark's baselines run the same statement.
   */
  public static final String BATCH_SQL =
      "update example_users set email = lower(trim(email))"
          + " where id between ? and ? and email <> lower(trim(email))";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Lower-cases and trims example_users.email for users whose email is not normalised.";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(FaultInjection.FAULT_TAG_SPEC);
  }

  @Override
  public List<String> tables() {
    return List.of("example_users");
  }

  @Override
  public int defaultBatchSize() {
    return 1000;
  }

  @Override
  public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit)
      throws SQLException {
    FaultInjection.checkPlan(context);
    return Jdbc.longs(
        context.dataSource(),
        KEYS_AFTER_SQL,
        afterKey == null ? Long.MIN_VALUE : afterKey,
        Math.max(0, limit));
  }

  /** In the batch's own transaction: the batch is recorded complete with its writes. */
  @Override
  public void processBatch(BackfillContext context, KeyRange range, Connection transaction)
      throws SQLException {
    FaultInjection.checkBatch(context, range);
    try (PreparedStatement statement = transaction.prepareStatement(BATCH_SQL)) {
      statement.setLong(1, range.startKey());
      statement.setLong(2, range.endKey());
      statement.executeUpdate();
    }
  }
}

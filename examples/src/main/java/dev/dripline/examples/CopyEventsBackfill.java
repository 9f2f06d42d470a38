package dev.dripline.examples;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.LiveContext;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.spi.TransactionalBackfillDefinition;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * {@code example.copy-events}: a target-style backfill that copies one tenant's rows of {@code
 * example_events} into {@code example_sink_events}; {@link #applyLive} applies the tenant's live
 * batches once the target is primed.
 *
 * <p>Every row written takes the next {@code applied_seq}, so the order in which batches and live
 * batches were applied can be read back. Backfill copies never overwrite a sink row ({@code on
 * conflict do nothing}): a row already there was written by live work, which is newer than the
 * source snapshot, or by an earlier attempt of the same batch.
 */
public class CopyEventsBackfill implements TransactionalBackfillDefinition {
  public static final String NAME = "example.copy-events";
  public static final String TENANT_OPTION = "tenant";

  /** SQLSTATE {@code 22P02}: the payload is not JSON. */
  private static final String INVALID_TEXT_REPRESENTATION = "22P02";

  /**
   * One event of a live batch.
   *
   * @param id the event id within the tenant
   * @param body the event's body
   */
  private record LiveEvent(long id, String body) {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Copies one tenant's example_events into example_sink_events (target-style).";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(
        OptionSpec.required(TENANT_OPTION, OptionType.STRING, "Tenant whose events are copied."),
        FaultInjection.FAULT_TAG_SPEC);
  }

  @Override
  public List<String> tables() {
    return List.of("example_sink_events");
  }

  @Override
  public int defaultBatchSize() {
    return 500;
  }

  @Override
  public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit)
      throws SQLException {
    FaultInjection.checkPlan(context);
    return Jdbc.longs(
        context.dataSource(),
        "select event_id from example_events"
            + " where tenant = ? and event_id > ? order by event_id limit ?",
        context.options().requireString(TENANT_OPTION),
        afterKey == null ? Long.MIN_VALUE : afterKey,
        Math.max(0, limit));
  }

  /** In the batch's own transaction: the batch is recorded complete with the rows it copied. */
  @Override
  public void processBatch(BackfillContext context, KeyRange range, Connection transaction)
      throws SQLException {
    FaultInjection.checkBatch(context, range);
    String tenant = context.options().requireString(TENANT_OPTION);
    // Idempotent thanks to the conflict clause.
    try (PreparedStatement statement =
        transaction.prepareStatement(
            "insert into example_sink_events (tenant, event_id, body)"
                + " select tenant, event_id, body from example_events"
                + " where tenant = ? and event_id between ? and ? order by event_id"
                + " on conflict (tenant, event_id) do nothing")) {
      statement.setString(1, tenant);
      statement.setLong(2, range.startKey());
      statement.setLong(3, range.endKey());
      statement.executeUpdate();
    }
  }

  /**
   * Applies one live batch of a primed target (the engine's entry point): the tenant comes from the
   * target's options, and the target's name is the fault tag (spec §7), so a {@code live} row of
   * {@code example_faults} tagged with the target's name fails the target's live batches — as a
   * retryable failure, healed by deleting the row.
   *
   * @see #applyLive(DataSource, String, String, String)
   */
  @Override
  public void applyLive(LiveContext context, String payloadJson) throws SQLException {
    applyLive(
        context.dataSource(),
        context.options().requireString(TENANT_OPTION),
        payloadJson,
        context.target());
  }

  /**
   * Applies one live batch: inserts its events into {@code example_sink_events} in array order, in
   * one transaction.
   *
   * <p>An event already in the sink is overwritten and takes a fresh {@code applied_seq} (upsert
   * rather than do-nothing): live changes are newer than whatever the backfill copied, and the
   * fresh sequence number makes the order in which live batches were applied readable even for
   * events the backfill had already written. Re-applying the same batch is harmless: the bodies
   * stay the same.
   *
   * @param dataSource the database of the sink
   * @param tenant the tenant whose sink rows are written
   * @param payloadJson {@code {"events":[{"id":N,"body":"…"}]}}
   * @param faultTag tag of {@code live} faults that apply (e.g. the target's name), or {@code null}
   *     for none
   * @throws PermanentBackfillException when the payload is malformed: retrying cannot help
   * @throws InjectedFaultException while a {@code live} fault for {@code faultTag} is set
   */
  public void applyLive(DataSource dataSource, String tenant, String payloadJson, String faultTag)
      throws SQLException {
    FaultInjection.checkLive(dataSource, faultTag);
    try (Connection connection = dataSource.getConnection()) {
      List<LiveEvent> events = parse(connection, payloadJson);
      connection.setAutoCommit(false);
      try (PreparedStatement statement =
          connection.prepareStatement(
              "insert into example_sink_events (tenant, event_id, body) values (?, ?, ?)"
                  + " on conflict (tenant, event_id) do update set body = excluded.body,"
                  + " applied_seq = nextval(pg_get_serial_sequence('example_sink_events',"
                  + " 'applied_seq'))")) {
        // A batch of single-row statements runs in order, so applied_seq follows array order,
        // and an id repeated within one payload simply ends with its last body.
        for (LiveEvent event : events) {
          statement.setString(1, tenant);
          statement.setLong(2, event.id());
          statement.setString(3, event.body());
          statement.addBatch();
        }
        statement.executeBatch();
        connection.commit();
      } catch (SQLException | RuntimeException e) {
        connection.rollback();
        throw e;
      }
    }
  }

  /**
   * The payload's events in array order, read by PostgreSQL's own JSON parser (the examples need no
   * JSON library).
   */
  private static List<LiveEvent> parse(Connection connection, String payloadJson)
      throws SQLException {
    List<LiveEvent> events = new ArrayList<>();
    try (PreparedStatement statement =
        connection.prepareStatement(
            "select jsonb_typeof(p -> 'events'), e.i, jsonb_typeof(e.v -> 'id'), e.v ->> 'id',"
                + " jsonb_typeof(e.v -> 'body'), e.v ->> 'body'"
                + " from (select ?::jsonb as p) payload"
                + " left join lateral jsonb_array_elements(case jsonb_typeof(p -> 'events')"
                + " when 'array' then p -> 'events' end) with ordinality as e(v, i) on true"
                + " order by e.i")) {
      statement.setString(1, payloadJson);
      try (ResultSet rows = statement.executeQuery()) {
        while (rows.next()) {
          if (!"array".equals(rows.getString(1))) {
            throw new PermanentBackfillException("live payload has no \"events\" array");
          }
          if (rows.getObject(2) == null) {
            continue; // no events
          }
          long index = rows.getLong(2) - 1;
          if (!"number".equals(rows.getString(3)) || !"string".equals(rows.getString(5))) {
            throw new PermanentBackfillException(
                "live payload event " + index + " needs an \"id\" and a \"body\"");
          }
          long id;
          try {
            id = new BigDecimal(rows.getString(4)).longValueExact();
          } catch (ArithmeticException e) {
            throw new PermanentBackfillException(
                "live payload event " + index + " has an id that is not a bigint", e);
          }
          events.add(new LiveEvent(id, rows.getString(6)));
        }
      }
    } catch (SQLException e) {
      if (INVALID_TEXT_REPRESENTATION.equals(e.getSQLState())) {
        throw new PermanentBackfillException(
            "live payload is not valid JSON: " + e.getMessage(), e);
      }
      throw e;
    }
    return events;
  }
}

package dev.dripline.examples;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.LiveContext;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.spi.TransactionalBackfillDefinition;
import dev.dripline.store.db.Database;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.json.JsonMapper;
import io.micronaut.serde.annotation.Serdeable;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

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
@Singleton
public class CopyEventsBackfill implements TransactionalBackfillDefinition {
  public static final String NAME = "example.copy-events";
  public static final String TENANT_OPTION = "tenant";

  private final Database database;
  private final FaultInjection faults;
  private final JsonMapper json;

  public CopyEventsBackfill(Database database, FaultInjection faults, JsonMapper json) {
    this.database = database;
    this.faults = faults;
    this.json = json;
  }

  /**
   * A live batch's payload: {@code {"events":[{"id":N,"body":"…"}]}}.
   *
   * @param events the events, applied in this order
   */
  @Serdeable
  public record LivePayload(@Nullable List<LiveEvent> events) {}

  /**
   * One event of a live batch.
   *
   * @param id the event id within the tenant
   * @param body the event's body
   */
  @Serdeable
  public record LiveEvent(@Nullable Long id, @Nullable String body) {}

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
        OptionSpec.optional(
            FaultInjection.FAULT_TAG_OPTION,
            OptionType.STRING,
            "Tag of example_faults rows that apply to this run."));
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
  public List<Long> keysAfter(BackfillContext context, Long afterKey, int limit) {
    faults.checkPlan(FaultInjection.tagOf(context));
    String tenant = context.options().requireString(TENANT_OPTION);
    return database.queryLongs(
        "select event_id from example_events"
            + " where tenant = ? and event_id > ? order by event_id limit ?",
        statement -> {
          statement.setString(1, tenant);
          statement.setLong(2, afterKey == null ? Long.MIN_VALUE : afterKey);
          statement.setInt(3, Math.max(0, limit));
        });
  }

  @Override
  public void processBatch(BackfillContext context, KeyRange range) {
    database.runInTransaction(connection -> processBatch(context, range, connection));
  }

  /** In the batch's own transaction: the batch is recorded complete with the rows it copied. */
  @Override
  public void processBatch(BackfillContext context, KeyRange range, Connection transaction)
      throws SQLException {
    faults.checkBatch(FaultInjection.tagOf(context), range);
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
   * @see #applyLive(String, String, String)
   */
  @Override
  public void applyLive(LiveContext context, String payloadJson) {
    applyLive(context.options().requireString(TENANT_OPTION), payloadJson, context.target());
  }

  /**
   * Applies one live batch for {@code tenant}, using the tenant as the fault tag.
   *
   * @see #applyLive(String, String, String)
   */
  public void applyLive(String tenant, String payloadJson) {
    applyLive(tenant, payloadJson, tenant);
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
   * @param tenant the tenant whose sink rows are written
   * @param payloadJson {@code {"events":[{"id":N,"body":"…"}]}}
   * @param faultTag tag of {@code live} faults that apply (e.g. the target's name), or {@code null}
   *     for none
   * @throws PermanentBackfillException when the payload is malformed: retrying cannot help
   * @throws InjectedFaultException while a {@code live} fault for {@code faultTag} is set
   */
  public void applyLive(String tenant, String payloadJson, @Nullable String faultTag) {
    faults.checkLive(faultTag);
    List<LiveEvent> events = parse(payloadJson);
    database.inTransaction(
        connection -> {
          try (PreparedStatement statement =
              connection.prepareStatement(
                  "insert into example_sink_events (tenant, event_id, body) values (?, ?, ?)"
                      + " on conflict (tenant, event_id) do update set body = excluded.body,"
                      + " applied_seq = nextval(pg_get_serial_sequence('example_sink_events',"
                      + " 'applied_seq'))")) {
            // A batch of single-row statements runs in order, so applied_seq follows array
            // order, and an id repeated within one payload simply ends with its last body.
            for (LiveEvent event : events) {
              statement.setString(1, tenant);
              statement.setLong(2, event.id());
              statement.setString(3, event.body());
              statement.addBatch();
            }
            statement.executeBatch();
          }
          return null;
        });
  }

  private List<LiveEvent> parse(String payloadJson) {
    LivePayload payload;
    try {
      payload = json.readValue(payloadJson, LivePayload.class);
    } catch (IOException | RuntimeException e) {
      throw new PermanentBackfillException("live payload is not valid JSON: " + e.getMessage(), e);
    }
    if (payload == null || payload.events() == null) {
      throw new PermanentBackfillException("live payload has no \"events\" array");
    }
    for (int i = 0; i < payload.events().size(); i++) {
      LiveEvent event = payload.events().get(i);
      if (event == null || event.id() == null || event.body() == null) {
        throw new PermanentBackfillException(
            "live payload event " + i + " needs an \"id\" and a \"body\"");
      }
    }
    return payload.events();
  }
}

package dev.dripline.examples;

import static dev.dripline.examples.TestData.context;
import static dev.dripline.examples.TestData.query;
import static dev.dripline.examples.TestData.uniqueRunId;
import static dev.dripline.examples.TestData.uniqueTag;
import static dev.dripline.examples.TestData.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillOptions;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.LiveContext;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.store.db.Database;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@MicronautTest(startApplication = false, transactional = false)
class CopyEventsBackfillIT {
  @Inject Database database;
  final CopyEventsBackfill copy = new CopyEventsBackfill();

  private String tenant;
  private String other;

  /** This test's tenant has events 1..20 (event 5 missing); another tenant has 1..20 too. */
  @BeforeEach
  void insertEvents() {
    tenant = uniqueTag("tenant");
    other = uniqueTag("other");
    update(
        database,
        "insert into example_events (tenant, event_id, body)"
            + " select t, g, t || ':' || g from unnest(array[?, ?]) t, generate_series(1, 20) g"
            + " where not (t = ? and g = 5)",
        tenant,
        other,
        tenant);
  }

  @AfterEach
  void deleteEvents() {
    for (String table : List.of("example_events", "example_sink_events")) {
      update(database, "delete from " + table + " where tenant in (?, ?)", tenant, other);
    }
  }

  private BackfillContext context(Object... more) {
    Object[] keyValues = new Object[more.length + 2];
    keyValues[0] = "tenant";
    keyValues[1] = tenant;
    System.arraycopy(more, 0, keyValues, 2, more.length);
    return TestData.context(database, uniqueRunId(), CopyEventsBackfill.NAME, keyValues);
  }

  private List<List<Object>> sink(String who) {
    return query(
        database,
        "select event_id, body from example_sink_events where tenant = ? order by event_id",
        who);
  }

  private List<Object> sinkIdsByAppliedSeq() {
    return query(
            database,
            "select event_id from example_sink_events where tenant = ? order by applied_seq",
            tenant)
        .stream()
        .map(row -> row.get(0))
        .toList();
  }

  @Test
  void keysAreTheTenantsEventIds() throws Exception {
    BackfillContext context = context();

    assertThat(copy.keysAfter(context, null, 6)).containsExactly(1L, 2L, 3L, 4L, 6L, 7L);
    assertThat(copy.keysAfter(context, 17L, 6)).containsExactly(18L, 19L, 20L);
    assertThat(copy.keysAfter(context, 20L, 6)).isEmpty();
  }

  @Test
  void batchCopiesExactlyTheTenantsRangeAndIsIdempotent() throws Exception {
    BackfillContext context = context();

    copy.processBatch(context, new KeyRange(3, 8));
    copy.processBatch(context, new KeyRange(3, 8));

    assertThat(sink(tenant))
        .containsExactly(
            List.of(3L, tenant + ":3"),
            List.of(4L, tenant + ":4"),
            List.of(6L, tenant + ":6"),
            List.of(7L, tenant + ":7"),
            List.of(8L, tenant + ":8"));
    assertThat(sink(other)).isEmpty();
  }

  @Test
  void liveBatchesAreAppliedInArrayOrderAndOverwrite() throws Exception {
    copy.processBatch(context(), new KeyRange(1, 2));

    copy.applyLive(
        database.dataSource(),
        tenant,
        "{\"events\":[{\"id\":30,\"body\":\"a\"},{\"id\":2,\"body\":\"b\"}]}",
        null);
    copy.applyLive(
        database.dataSource(),
        tenant,
        "{\"events\":[{\"id\":25,\"body\":\"c\"},{\"id\":30,\"body\":\"d\"}]}",
        null);

    assertThat(sinkIdsByAppliedSeq()).containsExactly(1L, 2L, 25L, 30L);
    assertThat(sink(tenant))
        .containsExactly(
            List.of(1L, tenant + ":1"), List.of(2L, "b"), List.of(25L, "c"), List.of(30L, "d"));
  }

  @Test
  void malformedLivePayloadIsPermanent() throws Exception {
    assertThatThrownBy(() -> copy.applyLive(database.dataSource(), tenant, "not json", null))
        .isInstanceOf(PermanentBackfillException.class);
    assertThatThrownBy(() -> copy.applyLive(database.dataSource(), tenant, "{}", null))
        .isInstanceOf(PermanentBackfillException.class);
    assertThatThrownBy(
            () -> copy.applyLive(database.dataSource(), tenant, "{\"events\":[{\"id\":1}]}", null))
        .isInstanceOf(PermanentBackfillException.class);
    assertThatThrownBy(
            () ->
                copy.applyLive(
                    database.dataSource(),
                    tenant,
                    "{\"events\":[{\"id\":1,\"body\":\"a\"},{\"id\":1.5,\"body\":\"b\"}]}",
                    null))
        .isInstanceOf(PermanentBackfillException.class)
        .hasMessageContaining("event 1");
    assertThatThrownBy(() -> copy.applyLive(database.dataSource(), tenant, "[1]", null))
        .isInstanceOf(PermanentBackfillException.class);
    assertThat(sink(tenant)).isEmpty();
    copy.applyLive(database.dataSource(), tenant, "{\"events\":[]}", null);
    assertThat(sink(tenant)).isEmpty();
  }

  @Test
  void liveFaultFailsLiveBatchesUntilDeleted() throws Exception {
    String target = uniqueTag("target");
    update(database, "insert into example_faults (tag, phase) values (?, 'live')", target);
    String payload = "{\"events\":[{\"id\":1,\"body\":\"x\"}]}";
    try {
      assertThatThrownBy(() -> copy.applyLive(database.dataSource(), tenant, payload, target))
          .isInstanceOf(InjectedFaultException.class);
      assertThat(sink(tenant)).isEmpty();
    } finally {
      update(database, "delete from example_faults where tag = ?", target);
    }

    copy.applyLive(database.dataSource(), tenant, payload, target);
    assertThat(sink(tenant)).containsExactly(List.of(1L, "x"));
  }

  @Test
  void planFaultFailsKeysAfterUntilDeleted() throws Exception {
    String tag = uniqueTag("copy-plan");
    BackfillContext context = context("faultTag", tag);
    update(database, "insert into example_faults (tag, phase) values (?, 'plan')", tag);
    try {
      assertThatThrownBy(() -> copy.keysAfter(context, null, 10))
          .isInstanceOf(InjectedFaultException.class);
    } finally {
      update(database, "delete from example_faults where tag = ?", tag);
    }

    assertThat(copy.keysAfter(context, null, 10)).hasSize(10);
  }

  @Test
  void applyLiveThroughTheEngineTakesTheTenantFromOptionsAndTheTargetAsFaultTag() throws Exception {
    String target = uniqueTag("target");
    LiveContext live =
        new LiveContext(
            target,
            CopyEventsBackfill.NAME,
            new BackfillOptions(java.util.Map.of("tenant", tenant)),
            uniqueRunId(),
            database.dataSource());
    update(database, "insert into example_faults (tag, phase) values (?, 'live')", target);
    try {
      assertThatThrownBy(() -> copy.applyLive(live, "{\"events\":[{\"id\":1,\"body\":\"x\"}]}"))
          .isInstanceOf(InjectedFaultException.class);
      assertThat(sink(tenant)).isEmpty();
    } finally {
      update(database, "delete from example_faults where tag = ?", target);
    }

    copy.applyLive(live, "{\"events\":[{\"id\":2,\"body\":\"b\"},{\"id\":1,\"body\":\"a\"}]}");

    assertThat(sink(tenant)).containsExactly(List.of(1L, "a"), List.of(2L, "b"));
    assertThat(sinkIdsByAppliedSeq()).containsExactly(2L, 1L);
  }
}

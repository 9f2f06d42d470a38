package dev.dripline.examples;

import static dev.dripline.examples.TestData.query;
import static dev.dripline.examples.TestData.uniqueTag;
import static dev.dripline.examples.TestData.update;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.activities.targets.LiveBatchActivitiesImpl;
import dev.dripline.activities.targets.TargetPlanningActivitiesImpl;
import dev.dripline.store.db.Database;
import dev.dripline.workflows.targets.LiveDrain;
import dev.dripline.workflows.targets.LiveDrainRequest;
import dev.dripline.workflows.targets.PlannedRun;
import dev.dripline.workflows.targets.TargetRef;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Inject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code example.copy-events} as a target, through the engine's target activities: the target's
 * name is its fault tag for planning and live batches (spec §7), and live batches reach the sink in
 * arrival order.
 */
@MicronautTest(startApplication = false, transactional = false)
class TargetCopyEventsIT {
  @Inject TargetPlanningActivitiesImpl planning;
  @Inject LiveBatchActivitiesImpl live;
  @Inject Database database;

  private String name;
  private String tenant;

  @BeforeEach
  void createTarget() {
    name = uniqueTag("target");
    tenant = uniqueTag("tenant");
    update(
        database,
        "insert into example_events (tenant, event_id, body)"
            + " select ?, g, 'e' || g from generate_series(1, 5) g",
        tenant);
    update(
        database,
        "insert into targets (name, backfill, options, state) values (?, ?, ?::jsonb,"
            + " 'backfilling')",
        name,
        CopyEventsBackfill.NAME,
        "{\"tenant\":\"" + tenant + "\"}");
  }

  @AfterEach
  void deleteEverything() {
    update(database, "delete from example_faults where tag = ?", name);
    update(database, "delete from runs where target_name = ?", name);
    update(database, "delete from targets where name = ?", name);
    update(database, "delete from example_events where tenant = ?", tenant);
    update(database, "delete from example_sink_events where tenant = ?", tenant);
  }

  @Test
  void aPlanFaultTaggedWithTheTargetsNameFailsPlanningUntilDeleted() throws Exception {
    update(database, "insert into example_faults (tag, phase) values (?, 'plan')", name);

    assertThatThrownBy(() -> planning.plan(new TargetRef(name)))
        .isInstanceOfSatisfying(
            ApplicationFailure.class,
            failure -> {
              assertThat(failure.getType()).isEqualTo("TARGET_PLANNING_FAILED");
              assertThat(failure.isNonRetryable()).isFalse();
            });
    assertThat(query(database, "select id from runs where target_name = ?", name)).isEmpty();

    update(database, "delete from example_faults where tag = ?", name);
    PlannedRun run = planning.plan(new TargetRef(name));

    // The run carries the target's name as its fault tag, so batch faults apply to it too.
    assertThat(query(database, "select options->>'faultTag' from runs where id = ?", run.runId()))
        .containsExactly(List.of(name));
  }

  @Test
  void liveBatchesReachTheSinkInArrivalOrder() throws Exception {
    update(database, "update targets set state = 'primed' where name = ?", name);
    long first = liveBatch("{\"events\":[{\"id\":3,\"body\":\"first\"}]}");
    long second = liveBatch("{\"events\":[{\"id\":1,\"body\":\"second\"}]}");
    long third = liveBatch("{\"events\":[{\"id\":2,\"body\":\"third\"}]}");
    assertThat(first).isLessThan(second).isLessThan(third);

    LiveDrain drain = live.applyLiveBatches(new LiveDrainRequest(name, 10));

    assertThat(drain.applied()).isEqualTo(3);
    assertThat(drain.remaining()).isZero();
    assertThat(
            query(
                database,
                "select event_id from example_sink_events where tenant = ? order by applied_seq",
                tenant))
        .containsExactly(List.of(3L), List.of(1L), List.of(2L));
  }

  @Test
  void aLiveFaultTaggedWithTheTargetsNameFailsLiveBatchesRetryably() throws Exception {
    update(database, "update targets set state = 'primed' where name = ?", name);
    liveBatch("{\"events\":[{\"id\":1,\"body\":\"x\"}]}");
    update(database, "insert into example_faults (tag, phase) values (?, 'live')", name);

    assertThatThrownBy(() -> live.applyLiveBatches(new LiveDrainRequest(name, 10)))
        .isInstanceOfSatisfying(
            ApplicationFailure.class,
            failure -> {
              assertThat(failure.getType()).isEqualTo("LIVE_BATCH_FAILED");
              assertThat(failure.isNonRetryable()).isFalse();
            });
    assertThat(query(database, "select state from targets where name = ?", name))
        .containsExactly(List.of("primed"));

    update(database, "delete from example_faults where tag = ?", name);

    assertThat(live.applyLiveBatches(new LiveDrainRequest(name, 10)).applied()).isEqualTo(1);
  }

  private long liveBatch(String payload) {
    return (Long)
        query(
                database,
                "insert into live_batches (target_name, payload) values (?, ?::jsonb) returning id",
                name,
                payload)
            .get(0)
            .get(0);
  }
}

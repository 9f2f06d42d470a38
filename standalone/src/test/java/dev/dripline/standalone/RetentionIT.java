package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dripline.worker.PurgeScheduleStarter;
import dev.dripline.workflows.retention.PurgeWorkflowIds;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import io.temporal.client.schedules.ScheduleActionStartWorkflow;
import io.temporal.client.schedules.ScheduleClient;
import io.temporal.client.schedules.ScheduleDescription;
import io.temporal.client.schedules.ScheduleIntervalSpec;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Retention and deletion (spec D5) with the app and a worker in this JVM, on real PostgreSQL and
 * the real dev server: the purge schedule a worker creates, a second worker beside it, and the
 * deletion of a run of many batches, which answers before its batches are purged in the background.
 * The purge is held back by a row lock the test holds, never by waiting a time.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RetentionIT implements TestPropertyProvider {
  private static final String TAG = "retention-" + UUID.randomUUID().toString().substring(0, 8);
  private static final String QUEUE = "dripline-" + TAG;
  private static final int CHUNK = 500;
  private static final int BATCHES = 20_000;

  @Inject EmbeddedServer server;
  @Inject ScheduleClient schedules;
  @Inject PurgeScheduleStarter starter;
  private Api api;

  @Override
  public Map<String, String> getProperties() {
    return Map.of(
        "dripline.temporal.task-queue", QUEUE, "dripline.retention.chunk-size", "" + CHUNK);
  }

  @BeforeAll
  void connect() {
    api = new Api(server.getURI());
  }

  private ScheduleDescription awaitSchedule() {
    String id = PurgeWorkflowIds.schedule(QUEUE);
    await()
        .atMost(Duration.ofMinutes(1))
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptions()
        .until(() -> schedules.getHandle(id).describe() != null);
    return schedules.getHandle(id).describe();
  }

  @Test
  void theWorkerCreatesThePurgeScheduleAndASecondWorkerBesideItDoesNotFail() throws Exception {
    ScheduleDescription created = awaitSchedule();
    ScheduleActionStartWorkflow action =
        (ScheduleActionStartWorkflow) created.getSchedule().getAction();
    assertThat(action.getWorkflowType()).isEqualTo("Purge");
    assertThat(action.getOptions().getTaskQueue()).isEqualTo(QUEUE);
    assertThat(created.getSchedule().getSpec().getIntervals())
        .extracting(ScheduleIntervalSpec::getEvery)
        .containsExactly(Duration.ofHours(1));
    assertThat(starter.ensureSchedule()).as("a schedule as configured is left alone").isFalse();

    // Gone, then two workers start at once: one creates it, the other finds it.
    schedules.getHandle(PurgeWorkflowIds.schedule(QUEUE)).delete();
    try (ApplicationContext second =
        ApplicationContext.run(
            Map.of(
                "dripline.temporal.task-queue",
                QUEUE,
                "dripline.retention.chunk-size",
                CHUNK,
                "dripline.retention.schedule",
                false),
            "test")) {
      PurgeScheduleStarter other = second.getBean(PurgeScheduleStarter.class);
      CountDownLatch go = new CountDownLatch(1);
      ExecutorService threads = Executors.newFixedThreadPool(2);
      try {
        List<Future<Boolean>> ensured = new ArrayList<>();
        for (PurgeScheduleStarter each : List.of(starter, other)) {
          ensured.add(
              threads.submit(
                  () -> {
                    go.await();
                    return each.ensureSchedule();
                  }));
        }
        go.countDown();
        List<Boolean> changed = new ArrayList<>();
        for (Future<Boolean> each : ensured) {
          changed.add(each.get(1, TimeUnit.MINUTES));
        }
        assertThat(changed).as("one created it").contains(true);
      } finally {
        threads.shutdownNow();
      }
      assertThat(awaitSchedule().getSchedule().getSpec().getIntervals())
          .extracting(ScheduleIntervalSpec::getEvery)
          .containsExactly(Duration.ofHours(1));
    }
  }

  @Test
  void deletingARunOfManyBatchesAnswersAtOnceAndItsBatchesArePurgedInTheBackground()
      throws Exception {
    awaitSchedule();
    String backfill = "example.sleep";
    long id =
        TestDb.queryLong(
            "insert into runs (backfill, options, options_key, batch_size, max_parallel_batches,"
                + " status, started_at, finished_at, created_by)"
                + " values (?, '{\"items\":20000}', ?, 1, 1, 'completed', now(), now(), ?)"
                + " returning id",
            backfill,
            UUID.randomUUID().toString(),
            TAG);
    TestDb.execute(
        "insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status)"
            + " select ?, n, dripline_bigint_key(n), dripline_bigint_key(n), 1, 'completed'"
            + " from generate_series(1, ?) n",
        id,
        BATCHES);
    assertThat(api.get("/api/runs/" + id).status()).isEqualTo(200);
    assertThat(listed(id, "")).isTrue();
    long total = api.get("/api/runs?size=1").body().path("total").asLong();

    try (Connection latch = DriverManager.getConnection(TestDb.URL, "dripline", "dripline")) {
      latch.setAutoCommit(false);
      try (PreparedStatement hold =
          latch.prepareStatement(
              "select 1 from batches where run_id = ? and number = 1 for update")) {
        hold.setLong(1, id);
        hold.executeQuery().close();
      }

      Api.Response deleted = api.delete("/api/runs/" + id);

      assertThat(deleted.status()).isEqualTo(204);
      assertThat(api.get("/api/runs/" + id).status()).isEqualTo(404);
      assertThat(api.get("/api/runs/" + id + "/batches").status()).isEqualTo(404);
      assertThat(listed(id, "")).isFalse();
      assertThat(listed(id, "&status=completed")).isFalse();
      assertThat(listed(id, "&backfill=" + backfill)).isFalse();
      assertThat(api.get("/api/runs?size=1").body().path("total").asLong())
          .as("counted no more")
          .isEqualTo(total - 1);
      assertThat(api.delete("/api/runs/" + id).status()).isEqualTo(404);
      // The purge has begun, in the background, and waits for the test's lock.
      await()
          .atMost(Duration.ofMinutes(1))
          .pollInterval(Duration.ofMillis(100))
          .until(
              () ->
                  TestDb.queryLong(
                          "select count(*) from pg_stat_activity where wait_event_type = 'Lock'"
                              + " and query like 'delete from batches b where b.run_id = %'"
                              + " and pid <> pg_backend_pid()")
                      > 0);
      assertThat(TestDb.queryLong("select count(*) from batches where run_id = ?", id))
          .as("the run answered gone while every batch was still there")
          .isEqualTo(BATCHES);
      latch.rollback();
    }

    await()
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(250))
        .until(() -> TestDb.queryLong("select count(*) from batches where run_id = ?", id) == 0);
    await()
        .atMost(Duration.ofMinutes(1))
        .pollInterval(Duration.ofMillis(250))
        .until(() -> TestDb.queryLong("select count(*) from run_purges where run_id = ?", id) == 0);
  }

  /** Whether run {@code id} is on the first page of runs, newest first, with {@code filter}. */
  private boolean listed(long id, String filter) {
    JsonNode items = api.get("/api/runs?size=100" + filter).body().path("items");
    for (JsonNode item : items) {
      if (item.path("id").asLong() == id) {
        return true;
      }
    }
    return false;
  }
}

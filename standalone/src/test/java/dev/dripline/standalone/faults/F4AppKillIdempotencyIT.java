package dev.dripline.standalone.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * F4 — the API process is killed with SIGKILL in the middle of a burst of {@code POST /api/runs}
 * carrying {@code Idempotency-Key}s, started again, and the whole burst is replayed.
 *
 * <p><b>Injects:</b> {@value #KEYS} distinct keys (each with its own options, so R3's duplicate
 * rule does not interfere) sent by {@value #CLIENTS} client threads at once against an app JVM of
 * its own; the app is killed once {@value #KILL_AFTER} of them have been answered, so requests are
 * cut at every point of their handling — before the insert, between the insert and the workflow
 * start, after the start but before the answer.
 *
 * <p><b>Asserts:</b> after the replay (same keys, same bodies, against a fresh app JVM) exactly one
 * run exists per key; every replayed POST answers 200 (the original run) or 201 (the first request
 * never committed), and a key whose first POST was answered gets that same run back with 200; every
 * run has its workflow {@code dripline-run-<id>} and every workflow on the task queue has its run
 * (no orphan either way); every run completes with all its keys processed exactly once.
 */
class F4AppKillIdempotencyIT {
  private static final int KEYS = 200;
  private static final int CLIENTS = 8;
  private static final int KILL_AFTER = 60;
  private static final int ITEMS = 4;

  private final String tag = "f4-" + UUID.randomUUID().toString().substring(0, 8);
  private final String queue = "dripline-" + tag;
  private final List<ChildJvm> processes = new ArrayList<>();

  @AfterEach
  void stopProcesses() {
    for (ChildJvm process : processes) {
      process.close();
    }
  }

  /** What one POST came to: an answer, or none (the app died under it). */
  private record Outcome(int status, long id, String error) {
    boolean answered() {
      return status > 0;
    }
  }

  private String key(int i) {
    return tag + "-" + i;
  }

  private Map<String, Object> body(int i) {
    return Map.of(
        "backfill",
        "example.sleep",
        "options",
        Map.of("items", ITEMS, "sleepMs", 0, "faultTag", key(i)),
        "batchSize",
        2,
        "maxParallelBatches",
        2);
  }

  private Outcome post(OperatorApi api, int i) {
    try {
      OperatorApi.Answer answer = api.post("/api/runs", body(i), Map.of("Idempotency-Key", key(i)));
      return new Outcome(answer.status(), answer.status() < 300 ? answer.id() : -1, null);
    } catch (Exception e) {
      return new Outcome(0, -1, e.getClass().getSimpleName());
    }
  }

  /** Sends every key once from {@value #CLIENTS} threads; {@code onAnswer} sees each outcome. */
  private Outcome[] burst(OperatorApi api, Runnable onAnswer) throws Exception {
    Outcome[] outcomes = new Outcome[KEYS];
    ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
    try {
      List<Future<?>> sent = new ArrayList<>();
      for (int i = 0; i < KEYS; i++) {
        int index = i;
        sent.add(
            clients.submit(
                () -> {
                  outcomes[index] = post(api, index);
                  onAnswer.run();
                }));
      }
      for (Future<?> future : sent) {
        future.get(2, TimeUnit.MINUTES);
      }
    } finally {
      clients.shutdownNow();
    }
    return outcomes;
  }

  private Map<String, Long> runIdsByKey() {
    return FaultDb.query(
            "select idempotency_key, id from runs where idempotency_key like ?", tag + "-%")
        .stream()
        .collect(
            Collectors.toMap(
                row -> (String) row.get("idempotency_key"),
                row -> ((Number) row.get("id")).longValue()));
  }

  @Test
  void killedAppLeavesOneRunPerKeyAndEveryRunCompletesAfterTheReplay() throws Exception {
    processes.add(AppProcess.startWorker("f4-worker", queue, Map.of()));
    ChildJvm app = AppProcess.start("f4-app-1", queue, Map.of());
    processes.add(app);
    OperatorApi firstApi = new OperatorApi(app.base());

    // Act 1: the burst, with the app killed under it.
    AtomicInteger answered = new AtomicInteger();
    Thread killer =
        new Thread(
            () -> {
              try {
                while (answered.get() < KILL_AFTER) {
                  Thread.sleep(1);
                }
                app.kill();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    killer.start();
    long burstStart = System.nanoTime();
    Outcome[] first = burst(firstApi, answered::incrementAndGet);
    killer.join();
    long burstMillis = (System.nanoTime() - burstStart) / 1_000_000;

    Map<String, Long> recordedAtKill = runIdsByKey();
    int withoutWorkflow = 0;
    int answeredFirst = 0;
    int recordedButUnanswered = 0;
    try (TemporalProbe temporal = new TemporalProbe()) {
      for (Map.Entry<String, Long> run : recordedAtKill.entrySet()) {
        if (temporal.describe("dripline-run-" + run.getValue()).isEmpty()) {
          withoutWorkflow++;
        }
      }
    }
    for (int i = 0; i < KEYS; i++) {
      if (first[i].answered()) {
        answeredFirst++;
        assertThat(first[i].status()).as("first answer for key %d", i).isEqualTo(201);
      } else if (recordedAtKill.containsKey(key(i))) {
        recordedButUnanswered++;
      }
    }

    // Act 2: a fresh app, and the same burst again.
    ChildJvm secondApp = AppProcess.start("f4-app-2", queue, Map.of());
    processes.add(secondApp);
    OperatorApi api = new OperatorApi(secondApp.base());
    Outcome[] replay = burst(api, () -> {});

    // Assert: one run per key, every replay answered with it.
    Map<String, Long> runs = runIdsByKey();
    assertThat(runs).hasSize(KEYS);
    assertThat(
            FaultDb.queryLong("select count(*) from runs where idempotency_key like ?", tag + "-%"))
        .isEqualTo(KEYS);
    int replayCreated = 0;
    for (int i = 0; i < KEYS; i++) {
      Outcome again = replay[i];
      assertThat(again.status()).as("replay of key %d: %s", i, again).isIn(200, 201);
      assertThat(again.id()).as("replay of key %d", i).isEqualTo(runs.get(key(i)));
      if (first[i].answered()) {
        assertThat(again.status()).as("replay of answered key %d", i).isEqualTo(200);
        assertThat(again.id()).as("replay of answered key %d", i).isEqualTo(first[i].id());
      }
      if (recordedAtKill.containsKey(key(i))) {
        assertThat(again.status()).as("replay of recorded key %d", i).isEqualTo(200);
      }
      if (again.status() == 201) {
        replayCreated++;
      }
    }

    // Every run completes, with its keys processed exactly once.
    Set<Long> ids = new HashSet<>(runs.values());
    Long[] idArray = ids.toArray(Long[]::new);
    await()
        .atMost(Duration.ofMinutes(5))
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () ->
                FaultDb.queryLong(
                        "select count(*) from runs where id = any (?) and status = 'completed'",
                        (Object) idArray)
                    == KEYS);
    assertThat(
            FaultDb.queryLong(
                "select coalesce(sum(processed_keys), 0) from run_key_counts where run_id = any (?)",
                (Object) idArray))
        .isEqualTo((long) KEYS * ITEMS);
    assertThat(
            FaultDb.queryLong(
                "select count(*) from batches where run_id = any (?) and status <> 'completed'",
                (Object) idArray))
        .isZero();
    assertThat(
            FaultDb.queryLong(
                "select coalesce(max(max_seen), 0) from example_concurrency where run_id = any (?)",
                (Object) idArray))
        .isBetween(1L, 2L);

    // No orphans: every run has its workflow, closed as completed; every workflow its run.
    Map<String, Integer> workflowStates = new HashMap<>();
    try (TemporalProbe temporal = new TemporalProbe()) {
      for (long id : ids) {
        var execution = temporal.describe("dripline-run-" + id);
        assertThat(execution).as("workflow of run %d", id).isPresent();
        WorkflowExecutionStatus status = execution.get().getWorkflowExecutionInfo().getStatus();
        workflowStates.merge(status.name(), 1, Integer::sum);
        assertThat(status)
            .as("workflow of run %d", id)
            .isEqualTo(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED);
      }
      Set<String> expected =
          ids.stream().map(id -> "dripline-run-" + id).collect(Collectors.toSet());
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                Set<String> runWorkflows =
                    temporal.workflowIdsOnQueue(queue).stream()
                        .filter(id -> id.startsWith("dripline-run-"))
                        .collect(Collectors.toSet());
                assertThat(runWorkflows).isEqualTo(expected);
              });
    }

    System.out.printf(
        "%n=== F4 app kill during an Idempotency-Key burst (%s) ===%n"
            + "burst: %d keys from %d client threads in %d ms; app killed (SIGKILL) after %d"
            + " answers%n"
            + "first burst: %d answered 201, %d unanswered; at the kill %d runs recorded,"
            + " %d of them unanswered, %d recorded without a workflow yet%n"
            + "replay on a fresh app: %d answered 200 (the original run), %d answered 201"
            + " (first request never committed), 0 other%n"
            + "end: %d runs for %d keys, all completed, %d keys processed; workflows %s;"
            + " orphans 0%n%n",
        ReliabilityProfile.name(),
        KEYS,
        CLIENTS,
        burstMillis,
        KILL_AFTER,
        answeredFirst,
        KEYS - answeredFirst,
        recordedAtKill.size(),
        recordedButUnanswered,
        withoutWorkflow,
        KEYS - replayCreated,
        replayCreated,
        runs.size(),
        KEYS,
        (long) KEYS * ITEMS,
        workflowStates);
  }
}

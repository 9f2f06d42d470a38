package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * F6 — a batch definition that hangs past its timeout (spec R5b). Every batch of an {@code
 * example.sleep} run sleeps far longer than the batch timeout (start-to-close 3 s here). Temporal
 * gives each attempt up at its timeout and starts the next one; the attempt it gave up on must stop
 * — interrupted at its deadline, its lease left to run out — before the next one may take the
 * batch, and it records nothing.
 *
 * <p>Asserts: the run ends {@code failed} with every batch failed after exactly its attempts; the
 * witness {@code max_seen} and the sampled slot holders never above the cap; and no execution of
 * the definition is left running once the run has ended.
 */
class F6HungBatchIT {
  private static final int CAP = 3;
  private static final int BATCHES = 9;
  private static final int ATTEMPTS = 2;
  private static final Set<String> TERMINAL = Set.of("completed", "failed", "stopped");

  private final String tag = "f6-" + UUID.randomUUID().toString().substring(0, 8);
  private FaultStack stack;

  private String status(long id) {
    return stack.api().get("/api/runs/" + id).body().path("status").asText();
  }

  @AfterEach
  void stopProcesses() {
    if (stack != null) {
      stack.close();
    }
  }

  @Test
  void aHungDefinitionIsStoppedAtItsTimeoutAndTheCapHolds() throws Exception {
    stack =
        new FaultStack(
                tag,
                TestDb.URL,
                System.getenv().getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243"),
                Map.of(
                    "DRIPLINE_BATCH_TIMEOUT", "2s",
                    "DRIPLINE_BATCH_CHAIN_TIME", "1s",
                    "DRIPLINE_BATCH_MAX_ATTEMPTS", String.valueOf(ATTEMPTS)))
            .start();
    Sql sql = stack.sql();
    Api.Response created =
        stack
            .api()
            .post(
                "/api/runs",
                Map.of(
                    "backfill",
                    "example.sleep",
                    "options",
                    Map.of("items", BATCHES, "sleepMs", 600_000, "faultTag", tag),
                    "batchSize",
                    1,
                    "maxParallelBatches",
                    CAP));
    assertThat(created.status()).as("%s", created.body()).isEqualTo(201);
    long id = created.id();

    AtomicBoolean sampling = new AtomicBoolean(true);
    AtomicLong mostHolders = new AtomicLong();
    Thread sampler =
        new Thread(
            () -> {
              while (sampling.get()) {
                mostHolders.accumulateAndGet(
                    sql.queryLong(
                        "select count(*) from batches where run_id = ?"
                            + " and status in ('enqueued', 'running')",
                        id),
                    Math::max);
              }
            },
            "f6-slot-sampler");
    sampler.setDaemon(true);
    sampler.start();
    try {
      await()
          .atMost(Duration.ofMinutes(5))
          .pollInterval(Duration.ofMillis(250))
          .until(() -> TERMINAL.contains(status(id)));
    } finally {
      sampling.set(false);
      sampler.join();
    }

    assertThat(status(id)).isEqualTo("failed");
    assertThat(
            sql.queryLong(
                "select count(*) from batches where run_id = ? and status = 'failed'"
                    + " and attempts = ?",
                id,
                ATTEMPTS))
        .as("batches failed after exactly their attempts")
        .isEqualTo(BATCHES);
    assertThat(mostHolders.get()).as("slot holders sampled").isBetween(1L, (long) CAP);
    assertThat(sql.queryLong("select max_seen from example_concurrency where run_id = ?", id))
        .as("example_concurrency.max_seen (the witness)")
        .isBetween(1L, (long) CAP);
    // An attempt Temporal gave up on was interrupted: nothing of the run still executes.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                sql.queryLong(
                        "select count(*) from example_executing where run_id = ? and backend_pid in"
                            + " (select pid from pg_stat_activity)",
                        id)
                    == 0);
    assertThat(stack.worker().alive()).as("worker survived").isTrue();
  }
}

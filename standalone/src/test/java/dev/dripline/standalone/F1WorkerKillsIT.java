package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * F1 — worker kills. Injects: {@code kill -9} (SIGKILL) of the worker JVM at random moments of a
 * run, {@link FaultSizes#kills()} times (10 in the full variant), starting a new worker after each
 * kill; once over a run of {@code example.normalize-emails} (real UPDATEs on {@code example_users},
 * 2,000 batches of 5 rows in the full variant), once over {@code example.order-lines} (a tuple key,
 * 5 lines per batch, batch boundaries inside orders, with the witness) and once over a witness run
 * of {@code example.sleep} (same number of batches and kills), all at cap 8. The moments are random
 * but spread over the run: kill k happens once a random number of batches in the k-th stretch of
 * the run has completed, so every kill lands while the run is under way.
 *
 * <p>Asserts afterwards ({@link FaultRun#assertExact}): the run completed; every batch completed
 * and was recorded and counted exactly once (API, batch rows, sharded counters, outcome counters);
 * repeated attempts at most the cap per kill; the slot holders sampled never above 8; for
 * normalize-emails every seeded row normalised, for sleep the witness {@code max_seen} ≤ 8 and no
 * execution left counted.
 */
class F1WorkerKillsIT {
  private static final FaultSizes SIZES = FaultSizes.current();
  private final String tag = "f1-" + UUID.randomUUID().toString().substring(0, 8);
  private final long seed = new Random().nextLong();
  private FaultStack stack;

  @AfterEach
  void stopProcesses() {
    if (stack != null) {
      stack.close();
    }
  }

  private FaultStack start() throws Exception {
    stack =
        new FaultStack(
                tag,
                TestDb.URL,
                System.getenv().getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243"),
                Map.of())
            .start();
    return stack;
  }

  @Test
  void normalizeEmailsCompletesExactlyThroughWorkerKills() throws Exception {
    FaultStack stack = start();
    try (FaultRun run = FaultRun.normalizeEmails(stack, tag + "-n", SIZES.batches())) {
      List<Integer> killedAt = killDuring(run);
      run.awaitCompleted(Duration.ofMinutes(10));
      String figures = run.assertExact("F1", killedAt.size());
      FaultRun.record(
          "F1 normalize-emails kills at completed batches "
              + killedAt
              + " (seed "
              + seed
              + "); "
              + figures);
    }
  }

  /** The same over a tuple key (issue 20): its lines once each, its witness within the cap. */
  @Test
  void orderLinesCompletesExactlyThroughWorkerKills() throws Exception {
    FaultStack stack = start();
    try (FaultRun run = FaultRun.orderLines(stack, tag + "-o", SIZES.batches())) {
      List<Integer> killedAt = killDuring(run);
      run.awaitCompleted(Duration.ofMinutes(10));
      String figures = run.assertExact("F1", killedAt.size());
      FaultRun.record(
          "F1 order-lines kills at completed batches "
              + killedAt
              + " (seed "
              + seed
              + "); "
              + figures);
    }
  }

  @Test
  void sleepWitnessHoldsTheCapThroughWorkerKills() throws Exception {
    FaultStack stack = start();
    try (FaultRun run = FaultRun.sleep(stack, tag + "-s", SIZES.batches(), 20)) {
      List<Integer> killedAt = killDuring(run);
      run.awaitCompleted(Duration.ofMinutes(10));
      String figures = run.assertExact("F1", killedAt.size());
      FaultRun.record(
          "F1 sleep kills at completed batches " + killedAt + " (seed " + seed + "); " + figures);
    }
  }

  /**
   * Kills the worker {@link FaultSizes#kills()} times while {@code run} is under way and starts a
   * new one after each kill; returns the completed batches at each kill.
   */
  private List<Integer> killDuring(FaultRun run) throws InterruptedException {
    Random random = new Random(seed);
    int kills = SIZES.kills();
    double stretch = (double) run.batches() / (kills + 1);
    List<Integer> killedAt = new ArrayList<>();
    for (int k = 1; k <= kills; k++) {
      // Somewhere in [stretch·(k − ½), stretch·k): after the previous kill's restart made progress,
      // and never later than batches·kills/(kills + 1), so the run is still going.
      int threshold = (int) (stretch * (k - 0.5 + 0.5 * random.nextDouble()));
      long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
      int completed;
      while ((completed = run.completed()) < threshold) {
        assertThat(System.nanoTime())
            .as("progress to %d batches before kill %d", threshold, k)
            .isLessThan(deadline);
        assertThat(stack.worker().alive())
            .as("worker alive:\n%s", stack.worker().tail(40))
            .isTrue();
        Thread.sleep(20);
      }
      Thread.sleep(random.nextInt(100));
      completed = run.completed();
      assertThat(completed)
          .as("kill %d lands before the run completed", k)
          .isLessThan(run.batches());
      stack.killWorker();
      killedAt.add(completed);
      stack.startWorker();
    }
    return killedAt;
  }
}

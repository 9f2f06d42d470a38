package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * The shape shared by F2, F3 and the cluster's cases (D1): three runs at once on one stack — {@code
 * example.normalize-emails}, {@code example.order-lines} (a tuple key, issue 20) and an {@code
 * example.sleep} witness run that lasts longer — and one fault injected once the normalize run has
 * done a random 20–50 % of its batches, while the runs are still under way. Records how long the
 * fault lasted and how long after it batches completed again.
 */
final class FaultScenario {
  private FaultScenario() {}

  /** A fault injected mid-run; it returns when the service it broke is back. */
  @FunctionalInterface
  interface Fault {
    void inject() throws Exception;
  }

  /** Runs both, injects {@code fault} mid-run, and asserts both completed exactly. */
  static void run(FaultStack stack, String testCase, String tag, Fault fault) throws Exception {
    FaultSizes sizes = FaultSizes.current();
    Random random = new Random();
    // 100 ms per witness batch: at cap 8 it lasts batches/80 s, longer than the normalize run.
    try (FaultRun witness = FaultRun.sleep(stack, tag + "-s", sizes.batches(), 100);
        FaultRun normalize = FaultRun.normalizeEmails(stack, tag + "-n", sizes.batches());
        FaultRun lines = FaultRun.orderLines(stack, tag + "-o", sizes.batches())) {
      int threshold = (int) (normalize.batches() * (0.2 + 0.3 * random.nextDouble()));
      long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
      while (normalize.completed() < threshold) {
        assertThat(System.nanoTime()).as("progress before the fault").isLessThan(deadline);
        Thread.sleep(20);
      }
      int normalizeAt = normalize.completed();
      int witnessAt = witness.completed();
      assertThat(normalizeAt)
          .as("normalize run under way at the fault")
          .isLessThan(normalize.batches());
      assertThat(witnessAt).as("witness run under way at the fault").isLessThan(witness.batches());
      List<FaultRun> runs = List.of(witness, normalize, lines);
      int allAt = completed(runs);
      long faultStart = System.nanoTime();
      fault.inject();
      double faultSeconds = (System.nanoTime() - faultStart) / 1e9;
      int allAfter = awaitCompleted(runs);
      double resumedSeconds = awaitProgress(runs, allAfter);
      normalize.awaitCompleted(Duration.ofMinutes(10));
      lines.awaitCompleted(Duration.ofMinutes(10));
      witness.awaitCompleted(Duration.ofMinutes(10));
      String a = normalize.assertExact(testCase, 1);
      String b = witness.assertExact(testCase, 1);
      String c = lines.assertExact(testCase, 1);
      assertThat(stack.worker().alive())
          .as("worker survived:\n%s", stack.worker().tail(40))
          .isTrue();
      assertThat(stack.app().alive()).as("app survived:\n%s", stack.app().tail(40)).isTrue();
      FaultRun.record(
          String.format(
              "%s fault at %d/%d normalize and %d/%d witness batches, lasted %.1f s, %d"
                  + " batches of the runs completed meanwhile, batches completing again %.1f s"
                  + " after it; %s | %s | %s",
              testCase,
              normalizeAt,
              normalize.batches(),
              witnessAt,
              witness.batches(),
              faultSeconds,
              allAfter - allAt,
              resumedSeconds,
              a,
              b,
              c));
    }
  }

  /** Completed batches of all {@code runs}; -1 while PostgreSQL does not answer. */
  private static int completed(List<FaultRun> runs) {
    int sum = 0;
    for (FaultRun run : runs) {
      int completed = run.completed();
      if (completed < 0) {
        return -1;
      }
      sum += completed;
    }
    return sum;
  }

  private static int batches(List<FaultRun> runs) {
    return runs.stream().mapToInt(FaultRun::batches).sum();
  }

  /** {@link #completed(List)}, once PostgreSQL answers (within a bound). */
  private static int awaitCompleted(List<FaultRun> runs) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
    int completed = completed(runs);
    while (completed < 0) {
      assertThat(System.nanoTime()).as("PostgreSQL answering after the fault").isLessThan(deadline);
      Thread.sleep(20);
      completed = completed(runs);
    }
    return completed;
  }

  /**
   * Waits until the runs complete another batch after the fault (or have completed them all), and
   * returns the seconds that took: how long recovery took as the runs see it.
   */
  private static double awaitProgress(List<FaultRun> runs, int after) throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + Duration.ofMinutes(10).toNanos();
    while (true) {
      int now = completed(runs);
      if (now > after || now == batches(runs)) {
        return (System.nanoTime() - start) / 1e9;
      }
      assertThat(System.nanoTime()).as("batches completing after the fault").isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}

package dev.dripline.store.targets;

import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.run.RunRepository;
import dev.dripline.workflows.targets.ReplanResult;
import dev.dripline.workflows.targets.TargetSnapshot;
import dev.dripline.workflows.targets.TargetTransitions;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.Optional;

/**
 * Operator replan (spec T7), the one implementation shared by the API and the target workflow's
 * activity: resets the streak, its anchors, the error and the run to retry, forgets the current run
 * and returns the target to pending_backfill, due at once.
 *
 * <p>In the same transaction it finds the target's active runs ({@link
 * RunRepository#findActiveOfTarget}); the caller sends them the stop after the transaction commits
 * (a run's workflow records its own stop), so that no run is stopped by a decision that could still
 * roll back. A run whose stop could not be sent is still the target's: its next planning attempt
 * sends it again and waits for it to end.
 *
 * <p>The target's row goes through {@link TargetRepository}, its runs through {@link
 * RunRepository}, both in one transaction ({@link DataTransactions}).
 */
@Singleton
public class TargetReplan {
  private final TargetRepository targets;
  private final RunRepository runs;
  private final DataTransactions transactions;

  public TargetReplan(TargetRepository targets, RunRepository runs, DataTransactions transactions) {
    this.targets = targets;
    this.runs = runs;
    this.transactions = transactions;
  }

  /**
   * A replan done.
   *
   * @param result what the API and the workflow report
   * @param stopping the active runs to send the stop to
   */
  public record Replanned(ReplanResult result, List<RunToStop> stopping) {}

  /**
   * What a replan of target {@code name} would do, holding its row lock in a transaction that is
   * rolled back, so it changes nothing.
   *
   * @return {@code found=false} if there is no such target; otherwise the state and streak before,
   *     and the current run if it is still active (pending, running or paused) — the run to stop
   */
  public ReplanResult preview(String name) {
    return transactions.rolledBack(
        connection -> {
          Optional<TargetWithQueue> row = targets.lock(name);
          if (row.isEmpty()) {
            return new ReplanResult(false, null, 0, null);
          }
          // Settings only shape backoff arithmetic, which a replan does not do.
          TargetSnapshot before = row.get().snapshot(null);
          return new ReplanResult(
              true, before.state(), before.consecutiveFailures(), activeRun(before.currentRunId()));
        });
  }

  /**
   * Replans target {@code name} in one transaction (the caller's, if it has one), finding its
   * active runs; the caller sends them the stop ({@link Replanned#stopping()}) after the commit.
   */
  public Replanned replan(String name) {
    return transactions.inTransaction(
        connection -> {
          Optional<TargetWithQueue> row = targets.lock(name);
          if (row.isEmpty()) {
            return new Replanned(new ReplanResult(false, null, 0, null), List.of());
          }
          TargetSnapshot before = row.get().snapshot(null);
          Long activeRun = activeRun(before.currentRunId());
          targets.write(before.state(), TargetTransitions.replanned(before));
          List<RunToStop> stopping = runs.findActiveOfTarget(name, before.currentRunId(), null);
          return new Replanned(
              new ReplanResult(true, before.state(), before.consecutiveFailures(), activeRun),
              stopping);
        });
  }

  /** {@code runId} if that run is still active (pending, running or paused), else null. */
  private Long activeRun(Long runId) {
    if (runId == null) {
      return null;
    }
    return runs.findActiveSummary(runId).isPresent() ? runId : null;
  }
}

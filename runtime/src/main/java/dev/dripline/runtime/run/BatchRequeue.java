package dev.dripline.runtime.run;

import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.run.RunState;
import dev.dripline.workflows.run.BatchStatus;
import dev.dripline.workflows.run.RetryRule;
import dev.dripline.workflows.run.RunStatus;
import io.micronaut.core.annotation.Nullable;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.Optional;

/**
 * Retry of a run (spec R8) in PostgreSQL, by the rule {@link RetryRule} (which the workflow tests'
 * fake store applies too), for the workflow's {@code retryRun} Update and {@code retry} signal
 * alike: failed batches — and, for a stopped run, stopped batches — go back to pending with their
 * error cleared; a failed or stopped run with anything to do again is re-opened as running; a
 * completed run is never touched, nor is a live run being stopped ({@code stop_requested_at} set),
 * which a retry is refused for until it has stopped. Its statements are {@link RunRepository}'s and
 * {@link BatchRepository}'s, in one transaction ({@link DataTransactions}).
 */
@Singleton
public class BatchRequeue {
  private final RunRepository runs;
  private final BatchRepository batches;
  private final DataTransactions transactions;

  public BatchRequeue(RunRepository runs, BatchRepository batches, DataTransactions transactions) {
    this.runs = runs;
    this.batches = batches;
    this.transactions = transactions;
  }

  /**
   * What a retry did.
   *
   * @param found false if the run does not exist
   * @param statusBefore the run's status before
   * @param requeued batches moved back to pending
   * @param reopened true if planning was unfinished and the run is re-opened for it
   * @param statusAfter the run's status after
   * @param stopping true if nothing was done because the run is live and being stopped
   */
  public record Outcome(
      boolean found,
      RunStatus statusBefore,
      int requeued,
      boolean reopened,
      RunStatus statusAfter,
      boolean stopping) {

    /** Whether the retry changed anything (else the API answers 409). */
    public boolean didSomething() {
      return requeued > 0 || reopened;
    }
  }

  /**
   * Applies a retry of run {@code runId} in one transaction — the caller's, if it has one — that
   * locks the run row ({@link RunRepository#lock}): the lock serialises a retry against the stop
   * being recorded and the run's finish.
   */
  public Outcome requeue(long runId) {
    return requeue(runId, null);
  }

  /**
   * {@link #requeue(long)} named by {@code token}: a call repeated with the token of the last
   * re-queue applied to the run changes nothing and answers what that one did (how many it moved
   * back, and the run's status now), so a replayed retry still says what the retry did.
   */
  public Outcome requeue(long runId, @Nullable String token) {
    return transactions.inTransaction(connection -> requeueLocked(runId, token));
  }

  private Outcome requeueLocked(long runId, String token) {
    Optional<RunState> locked = runs.lock(runId);
    if (locked.isEmpty()) {
      return new Outcome(false, null, 0, false, null, false);
    }
    RunStatus status = RunStatus.fromWire(locked.get().status());
    if (token != null && token.equals(locked.get().lastRequeueToken())) {
      int count = locked.get().lastRequeueCount() == null ? 0 : locked.get().lastRequeueCount();
      return new Outcome(true, status, count, false, status, false);
    }
    Outcome outcome = apply(runId, locked.get(), status);
    if (token != null && outcome.found()) {
      runs.recordRequeue(runId, token, outcome.requeued());
    }
    return outcome;
  }

  private Outcome apply(long runId, RunState locked, RunStatus status) {
    boolean planDone = locked.planDone();
    boolean stopRequested = locked.stopRequested();
    if (!RetryRule.applies(status, stopRequested)) {
      return new Outcome(true, status, 0, false, status, stopRequested && status.isActive());
    }
    List<String> from = RetryRule.requeued(status).stream().map(BatchStatus::wire).toList();
    int requeued = batches.requeue(runId, from);
    if (requeued > 0) {
      // Its failed batches are pending again: the failure budget counts afresh (P6b).
      runs.renewFailureBudget(runId, false);
    }
    boolean reopened = RetryRule.reopens(status, 0, planDone);
    RunStatus after = status;
    if (RetryRule.reopens(status, requeued, planDone)) {
      runs.reopen(runId);
      after = RunStatus.RUNNING;
    } else if (requeued > 0) {
      runs.clearError(runId);
    }
    return new Outcome(true, status, requeued, reopened, after, false);
  }
}

package dev.dripline.app.targets;

import dev.dripline.app.catalogue.StoredOptions;
import dev.dripline.runtime.targets.TargetRunStops;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.targets.LiveBatchRepository;
import dev.dripline.store.targets.RunToStop;
import dev.dripline.store.targets.TargetReplan;
import dev.dripline.store.targets.TargetRepository;
import dev.dripline.store.targets.TargetWithQueue;
import dev.dripline.workflows.targets.FailureStreak;
import dev.dripline.workflows.targets.ReplanResult;
import dev.dripline.workflows.targets.TargetState;
import io.micronaut.data.model.Page;
import io.micronaut.data.model.Pageable;
import io.micronaut.transaction.annotation.Transactional;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The API's reads and changes of target records ({@code targets}, {@code live_batches}), through
 * core's repositories. The target workflow changes the same rows; every write here is one statement
 * or one transaction whose guard is in SQL.
 */
@Singleton
public class TargetRecords {
  private final TargetRepository targets;
  private final RunRepository runs;
  private final LiveBatchRepository liveBatches;
  private final TargetReplan replans;
  private final DataTransactions transactions;
  private final StoredOptions options;

  public TargetRecords(
      TargetRepository targets,
      RunRepository runs,
      LiveBatchRepository liveBatches,
      TargetReplan replans,
      DataTransactions transactions,
      StoredOptions options) {
    this.targets = targets;
    this.runs = runs;
    this.liveBatches = liveBatches;
    this.replans = replans;
    this.transactions = transactions;
    this.options = options;
  }

  /** A live batch just queued. */
  record QueuedLiveBatch(long id, long queuedAhead) {}

  /**
   * A target just deleted.
   *
   * @param currentRunId its run, or {@code null}
   * @param stopping its running or paused runs, whose recorded stop is still to be delivered
   */
  record DeletedTarget(Long currentRunId, List<RunToStop> stopping) {}

  /**
   * Registers a target in {@code pending_backfill} with an empty streak (spec T1).
   *
   * @return false if a target of that name exists
   */
  boolean insert(NewTarget target) {
    return targets.register(target.name(), target.backfill(), target.optionsJson(), target.group())
        == 1;
  }

  /** Removes a target whose workflow could not be started, so nothing is left half-written. */
  void deleteUnstarted(String name) {
    targets.deleteUnstarted(name);
  }

  Optional<TargetRow> find(String name) {
    return targets.find(name).map(this::row);
  }

  /** Targets by name, optionally of one state and/or one group. */
  Page<TargetRow> list(TargetState state, String group, int page, int size) {
    return targets
        .list(state == null ? null : state.wire(), group, Pageable.from(page, size))
        .map(this::row);
  }

  /** Targets failing first, then stuck ones, then the rest (the dashboard's list). */
  Page<TargetRow> listFailingFirst(int page, int size) {
    return targets
        .listFailingFirst(FailureStreak.FAILING_THRESHOLD, Pageable.from(page, size))
        .map(this::row);
  }

  /**
   * Queues a live batch behind the target's others.
   *
   * @return empty if the target does not exist
   */
  @Transactional
  Optional<QueuedLiveBatch> queueLiveBatch(String name, String payloadJson) {
    long id = liveBatches.nextId();
    if (liveBatches.queue(id, name, payloadJson) == 0) {
      return Optional.empty();
    }
    return Optional.of(new QueuedLiveBatch(id, liveBatches.queuedAhead(name, id)));
  }

  /**
   * What an operator replan (spec T7) would do, through core's {@link TargetReplan}; changes
   * nothing.
   */
  ReplanResult previewReplan(String name) {
    return replans.preview(name);
  }

  /**
   * Operator replan (spec T7) through core's {@link TargetReplan}, the one implementation the
   * workflow's {@code replan} signal uses too: the target is reset and its runs are stopped in
   * their records in one transaction.
   */
  TargetReplan.Replanned replan(String name) {
    return replans.replan(name);
  }

  /** The target's active runs, to send the stop to ({@link TargetRunStops}). */
  List<RunToStop> activeRuns(String name) {
    return transactions.inTransaction(
        connection -> {
          Long currentRunId = targets.find(name).map(TargetWithQueue::currentRunId).orElse(null);
          return runs.findActiveOfTarget(name, currentRunId, null);
        });
  }

  /**
   * Deletes a target and (by cascade) its live batches, finding in the same transaction its active
   * runs ({@link TargetRunStops}) — those begun since the caller sent its stops, to stop as well.
   *
   * @return empty if there was no such target
   */
  Optional<DeletedTarget> delete(String name) {
    return transactions.inTransaction(
        connection -> {
          Optional<TargetWithQueue> target = targets.lock(name);
          if (target.isEmpty()) {
            return Optional.empty();
          }
          Long currentRunId = target.get().currentRunId();
          targets.deleteByName(name);
          return Optional.of(
              new DeletedTarget(currentRunId, runs.findActiveOfTarget(name, currentRunId, null)));
        });
  }

  /** The API's view of a stored target; ages by the database's clock. */
  private TargetRow row(TargetWithQueue t) {
    Long oldestAge =
        t.oldestQueuedAt() == null
            ? null
            : Math.max(0, Duration.between(t.oldestQueuedAt(), t.dbNow()).toSeconds());
    return new TargetRow(
        t.name(),
        t.backfill(),
        options.read(t.options(), "target " + t.name()),
        t.groupName(),
        TargetState.fromWire(t.state()),
        t.consecutiveFailures(),
        t.firstFailedAt(),
        t.lastAttemptAt(),
        t.nextAttemptAt(),
        t.lastError(),
        t.currentRunId(),
        t.createdAt(),
        t.updatedAt(),
        t.queuedLiveBatches(),
        oldestAge);
  }
}

package dev.dripline.activities.targets;

import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.activities.run.ErrorText;
import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.BackfillOptions;
import dev.dripline.spi.LiveContext;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.Database;
import dev.dripline.store.targets.LiveBatchRepository;
import dev.dripline.store.targets.TargetRepository;
import dev.dripline.store.targets.TargetWithQueue;
import dev.dripline.workflows.targets.LiveBatchActivities;
import dev.dripline.workflows.targets.LiveDrain;
import dev.dripline.workflows.targets.LiveDrainRequest;
import dev.dripline.workflows.targets.TargetFailure;
import dev.dripline.workflows.targets.TargetRef;
import dev.dripline.workflows.targets.TargetSnapshot;
import dev.dripline.workflows.targets.TargetState;
import dev.dripline.workflows.targets.TargetTransitions;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link LiveBatchActivities} on PostgreSQL: a primed target's live batches, applied by its
 * definition in arrival order.
 *
 * <p><b>Live batches are applied at least once</b>: a live batch is applied by the definition in
 * the definition's own transaction and marked applied in a second one, so a crash between the two
 * applies it again. Definitions must make {@link BackfillDefinition#applyLive} idempotent, as the
 * SPI requires.
 */
@Singleton
public class LiveBatchActivitiesImpl implements LiveBatchActivities {
  private static final Logger LOG = LoggerFactory.getLogger(LiveBatchActivitiesImpl.class);

  private final TargetRepository records;
  private final LiveBatchRepository liveBatches;
  private final DataTransactions transactions;
  private final BackfillRegistry registry;
  private final TargetOptions options;
  private final TargetRecordActivitiesImpl targetRecords;
  private final Database database;

  public LiveBatchActivitiesImpl(
      TargetRepository records,
      LiveBatchRepository liveBatches,
      DataTransactions transactions,
      BackfillRegistry registry,
      TargetOptions options,
      TargetRecordActivitiesImpl targetRecords,
      Database database) {
    this.records = records;
    this.liveBatches = liveBatches;
    this.transactions = transactions;
    this.registry = registry;
    this.options = options;
    this.targetRecords = targetRecords;
    this.database = database;
  }

  // ---------------------------------------------------------------------------------------------
  // Live batches (T5)

  /** The next queued live batch of a primed target, read under the target's row lock. */
  private record NextLive(TargetSnapshot target, String optionsJson, Long id, String payload) {}

  /**
   * {@inheritDoc}
   *
   * <p>Stops at the first failure. A {@link PermanentBackfillException} marks the live batch failed
   * and the target needs_resync; any other failure is raised as a retryable {@code
   * LIVE_BATCH_FAILED} (its error is kept on the live batch, which stays queued) — the batches
   * applied before it stay applied, so a retry resumes after them.
   */
  @Override
  public LiveDrain applyLiveBatches(LiveDrainRequest request) {
    String name = request.name();
    int applied = 0;
    BackfillDefinition definition = null;
    BackfillOptions definitionOptions = null;
    while (applied < request.max()) {
      NextLive next = transactions.inTransaction(connection -> nextLive(name));
      if (next.id() == null) {
        break;
      }
      if (definition == null) {
        definition = liveDefinition(next.target());
        try {
          definitionOptions =
              new BackfillOptions(
                  options.effectiveOptions(definition, name, next.optionsJson()).asMap());
        } catch (ApplicationFailure e) {
          if (!TargetFailure.TARGET_PLANNING_PERMANENT.name().equals(e.getType())) {
            throw e;
          }
          // The options no longer fit the definition: no live batch can apply until a resync.
          // The batch itself is not at fault, so it stays queued.
          TargetSnapshot after = liveFailed(name, null, e.getOriginalMessage());
          return new LiveDrain(applied, after.queuedLiveBatches(), after);
        }
      }
      try {
        definition.applyLive(
            new LiveContext(
                name, definition.name(), definitionOptions, next.id(), database.dataSource()),
            next.payload());
      } catch (PermanentBackfillException e) {
        TargetSnapshot after =
            liveFailed(name, next.id(), "live batch " + next.id() + ": " + ErrorText.of(e));
        return new LiveDrain(applied, after.queuedLiveBatches(), after);
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        String error = ErrorText.of(e);
        recordLiveError(next.id(), error);
        throw ApplicationFailure.newFailureWithCause(
            "live batch " + next.id() + " of target " + name + " failed: " + error,
            TargetFailure.LIVE_BATCH_FAILED.name(),
            e);
      }
      liveBatches.markApplied(next.id());
      applied++;
    }
    TargetSnapshot after = targetRecords.load(new TargetRef(name));
    return new LiveDrain(applied, after.queuedLiveBatches(), after);
  }

  private NextLive nextLive(String name) {
    TargetWithQueue row = records.lock(name).orElse(null);
    if (row == null) {
      return new NextLive(TargetSnapshot.notFound(name), null, null, null);
    }
    TargetSnapshot t = row.snapshot(targetRecords.settings());
    if (t.state() != TargetState.PRIMED) {
      return new NextLive(t, row.options(), null, null);
    }
    return liveBatches
        .findFirstQueued(name)
        .map(live -> new NextLive(t, row.options(), live.id(), live.payload()))
        .orElseGet(() -> new NextLive(t, row.options(), null, null));
  }

  private BackfillDefinition liveDefinition(TargetSnapshot target) {
    return registry
        .find(target.backfill())
        .map(KeyedBackfill::definition)
        .orElseThrow(
            () ->
                ApplicationFailure.newFailure(
                    "no backfill definition named "
                        + target.backfill()
                        + " (target "
                        + target.name()
                        + ") is registered in this worker",
                    TargetFailure.LIVE_BATCH_FAILED.name()));
  }

  /**
   * Marks the live batch (if any) failed and the primed target needs_resync, in one transaction.
   */
  private TargetSnapshot liveFailed(String name, Long liveBatchId, String error) {
    return transactions.inTransaction(
        connection -> {
          TargetWithQueue row = records.lock(name).orElse(null);
          if (row == null) {
            return TargetSnapshot.notFound(name);
          }
          TargetSnapshot t = row.snapshot(targetRecords.settings());
          if (t.state() != TargetState.PRIMED) {
            return t;
          }
          String text = ErrorText.truncate(error);
          if (liveBatchId != null) {
            liveBatches.markFailed(liveBatchId, text);
          }
          TargetSnapshot after = TargetTransitions.liveFailed(t, text, row.dbNow());
          records.write(TargetState.PRIMED, after);
          // Read again: the failed batch no longer counts as queued.
          return records.find(name).orElseThrow().snapshot(targetRecords.settings());
        });
  }

  private void recordLiveError(long liveBatchId, String error) {
    try {
      liveBatches.recordError(liveBatchId, ErrorText.truncate(error));
    } catch (RuntimeException e) {
      // Only a diagnostic; the retryable failure raised by the caller is what matters.
      LOG.warn("Cannot record the error of live batch {}: {}", liveBatchId, e.getMessage());
    }
  }
}

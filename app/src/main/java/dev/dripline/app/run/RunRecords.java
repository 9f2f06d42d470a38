package dev.dripline.app.run;

import dev.dripline.app.catalogue.PublishedBackfill;
import dev.dripline.app.catalogue.StoredOptions;
import dev.dripline.spi.Key;
import dev.dripline.store.keys.KeyCodec;
import dev.dripline.store.run.BatchCount;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.BatchView;
import dev.dripline.store.run.RunRepository;
import dev.dripline.store.run.RunView;
import dev.dripline.workflows.run.BatchStatus;
import dev.dripline.workflows.run.RunStatus;
import dev.dripline.workflows.run.RunWorkflowIds;
import jakarta.inject.Singleton;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.postgresql.util.PSQLException;

/**
 * The API's runs and batches, over {@link RunRepository} and {@link BatchRepository}: maps their
 * rows to the API's ({@link RunRow}, {@link BatchRow}) and an insert's unique violations to an
 * {@link Insertion}. The SQL lives in the stores.
 */
@Singleton
public class RunRecords {
  private final RunRepository runs;
  private final BatchRepository batches;
  private final StoredOptions options;

  public RunRecords(RunRepository runs, BatchRepository batches, StoredOptions options) {
    this.runs = runs;
    this.batches = batches;
    this.options = options;
  }

  /** What inserting a run came to. */
  sealed interface Insertion {
    /** The run was inserted with this id. */
    record Inserted(long id) implements Insertion {}

    /** An active run with the same backfill, options and maxRecords exists (R3). */
    record DuplicateActive() implements Insertion {}

    /** The idempotency key was taken by a concurrent request. */
    record DuplicateIdempotencyKey() implements Insertion {}
  }

  /** Inserts a pending run; its workflow id is derived from the id it is given. */
  Insertion insert(NewRun run) {
    long id = runs.nextId();
    try {
      runs.insert(
          id,
          run.backfill(),
          run.optionsJson(),
          run.batchSize(),
          run.maxRecords(),
          run.requestedMaxParallelBatches(),
          run.maxParallelBatches(),
          run.startAt(),
          run.createdBy(),
          run.idempotencyKey(),
          RunWorkflowIds.forRun(id),
          run.tuning() == null ? null : run.tuning().targetMillis(),
          run.tuning() == null ? null : run.tuning().minBatchSize(),
          run.tuning() == null ? null : run.tuning().maxBatchSize(),
          run.tuning() == null ? null : run.startingBatchSize(),
          run.maxFailedBatchesPercent(),
          run.failureBudgetMinBatches(),
          run.pool(),
          run.niceRatio(),
          null,
          null);
      return new Insertion.Inserted(id);
    } catch (RuntimeException e) {
      String constraint = uniqueViolated(e);
      if ("runs_one_active".equals(constraint)) {
        return new Insertion.DuplicateActive();
      }
      if (constraint != null && constraint.contains("idempotency_key")) {
        return new Insertion.DuplicateIdempotencyKey();
      }
      throw e;
    }
  }

  /** The constraint a unique violation in {@code e}'s causes names, else {@code null}. */
  private static String uniqueViolated(Throwable e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof PSQLException psql
          && "23505".equals(psql.getSQLState())
          && psql.getServerErrorMessage() != null) {
        return psql.getServerErrorMessage().getConstraint();
      }
    }
    return null;
  }

  /** Removes a run whose workflow could not be started, so nothing is left half-written. */
  void deleteUnstarted(long id) {
    runs.deleteUnstarted(id);
  }

  Optional<RunRow> find(long id) {
    return runs.find(id).map(this::run);
  }

  Optional<RunRow> findByIdempotencyKey(String key) {
    return runs.findByIdempotencyKey(key).map(this::run);
  }

  /** The active run a new run with these values would duplicate (R3), if any. */
  Optional<Long> findActiveDuplicate(String backfill, String optionsKey, Long maxRecords) {
    return runs.findActiveDuplicate(backfill, optionsKey, maxRecords);
  }

  /** Runs newest first, optionally of one status and/or one backfill. */
  Page<RunRow> list(RunStatus status, String backfill, int page, int size) {
    String wire = status == null ? null : status.wire();
    List<RunView> found = runs.list(wire, backfill, size, (long) page * size);
    return new Page<>(found.stream().map(this::run).toList(), count(wire, backfill));
  }

  private long count(String status, String backfill) {
    if (status == null) {
      return backfill == null ? runs.countAll() : runs.countOfBackfill(backfill);
    }
    return backfill == null
        ? runs.countOfStatus(status)
        : runs.countOfStatusAndBackfill(status, backfill);
  }

  /**
   * Batches per status of each of the given runs; absent statuses are absent ({@link
   * BatchRepository#counts}).
   */
  Map<Long, Map<BatchStatus, Long>> batchCounts(List<Long> runIds) {
    if (runIds.isEmpty()) {
      return Map.of();
    }
    Map<Long, Map<BatchStatus, Long>> counts = new HashMap<>();
    for (BatchCount count : batches.counts(runIds)) {
      counts
          .computeIfAbsent(count.runId(), id -> new EnumMap<>(BatchStatus.class))
          .put(BatchStatus.fromWire(count.status()), count.batches());
    }
    return counts;
  }

  /**
   * A run's batches in number order, optionally of one status; their total from {@link
   * #batchCounts} (completed batches from the run's counter), not from counting the run's entries.
   */
  Page<BatchRow> batches(long runId, BatchStatus status, int page, int size) {
    long offset = (long) page * size;
    List<BatchView> found =
        status == null
            ? batches.page(runId, size, offset)
            : batches.pageOfStatus(runId, status.wire(), size, offset);
    Map<BatchStatus, Long> counts = batchCounts(List.of(runId)).getOrDefault(runId, Map.of());
    long total =
        status == null
            ? counts.values().stream().mapToLong(Long::longValue).sum()
            : counts.getOrDefault(status, 0L);
    return new Page<>(found.stream().map(RunRecords::batch).toList(), total);
  }

  /**
   * The batch of run {@code runId}, a run of {@code definition}, whose range holds {@code key}: the
   * last that starts at or before it, if it does not end before it — in the order planning cut the
   * batches in. For most keys that is the records' byte order, and one scan of their index finds
   * the batch; a table definition's text keys were ordered in their column's collation
   * (docs/keys.md), so their batch is searched for by number, whose order is planning's.
   */
  Optional<BatchRow> batchHolding(long runId, Key key, PublishedBackfill definition) {
    PlanningKeyOrder order = PlanningKeyOrder.of(definition, batches);
    if (order == null) {
      return batches
          .lastStartingAtOrBefore(runId, KeyCodec.encode(key))
          .filter(batch -> batch.endKey().compareTo(key) >= 0)
          .map(RunRecords::batch);
    }
    return lastStartingAtOrBefore(runId, key, order)
        .filter(batch -> order.compare(batch.endKey(), key) >= 0)
        .map(RunRecords::batch);
  }

  /**
   * Run {@code runId}'s last batch that starts at or before {@code key} in {@code order}: a binary
   * search over batch numbers (which may have gaps), one lookup by primary key and at most one
   * comparison per text column per halving.
   */
  private Optional<BatchView> lastStartingAtOrBefore(long runId, Key key, PlanningKeyOrder order) {
    long low = 0;
    long high = batches.lastNumber(runId).orElse(-1);
    BatchView found = null;
    while (low <= high) {
      long middle = (low + high) >>> 1;
      Optional<BatchView> probe = batches.firstNumberedFrom(runId, (int) middle);
      if (probe.isEmpty() || probe.get().number() > high) {
        high = middle - 1;
      } else if (order.compare(probe.get().startKey(), key) <= 0) {
        found = probe.get();
        low = found.number() + 1L;
      } else {
        high = middle - 1;
      }
    }
    return Optional.ofNullable(found);
  }

  /** Records that pending run {@code id} is to be stopped (R2); false if it is not pending. */
  boolean recordStopOfPending(long id) {
    return runs.recordStopOfPending(id) == 1;
  }

  /**
   * Deletes a pending or terminal run, leaving its batches to the purge ({@code run_purges}); false
   * if none was.
   */
  boolean deleteIfDeletable(long id) {
    return runs.deleteIfDeletable(id) == 1;
  }

  private RunRow run(RunView r) {
    return new RunRow(
        r.id(),
        r.backfill(),
        options.read(r.options(), "run " + r.id()),
        r.batchSize(),
        r.maxRecords(),
        r.requestedMaxParallelBatches(),
        r.maxParallelBatches(),
        r.startAt(),
        r.createdBy(),
        RunStatus.fromWire(r.status()),
        r.error(),
        r.workflowId(),
        r.totalKeys(),
        r.processedKeys(),
        r.createdAt(),
        r.updatedAt(),
        r.startedAt(),
        r.finishedAt(),
        r.stopping(),
        r.planDone(),
        r.heldSince(),
        r.throttledMillis(),
        r.targetBatchMillis(),
        r.minBatchSize(),
        r.maxBatchSize(),
        r.currentBatchSize(),
        FailureBudgetResponse.of(r),
        r.pool(),
        r.niceRatio());
  }

  private static BatchRow batch(BatchView b) {
    return new BatchRow(
        b.number(),
        b.startKey(),
        b.endKey(),
        b.size(),
        BatchStatus.fromWire(b.status()),
        b.attempts(),
        b.error(),
        b.startedAt(),
        b.finishedAt());
  }
}

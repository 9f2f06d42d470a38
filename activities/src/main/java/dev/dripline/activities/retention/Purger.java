package dev.dripline.activities.retention;

import dev.dripline.runtime.config.RetentionConfig;
import dev.dripline.store.retention.PurgeRepository;
import dev.dripline.workflows.retention.PurgeReport;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The purge's work (spec D5; docs/design.md "Retention and deletion"), in the order it is due: the
 * batches of deleted runs (so that a deletion's space comes back first), the batches of runs that
 * ended before the cutoff ({@code now - DRIPLINE_RETENTION}), then webhook deliveries and events
 * and audit events older than it. Every statement removes at most {@code DRIPLINE_PURGE_CHUNK_SIZE}
 * rows and commits on its own; after each, the caller's {@code progress} hears what has been
 * removed so far (the activity heartbeats it). Nothing here remembers where it was: what is left in
 * the tables is the work left, so a call that stopped anywhere, or died, is taken up by the next.
 */
@Singleton
public class Purger {
  /** Runs looked up per statement. */
  static final int RUNS_PER_LOOKUP = 100;

  /** One delete statement's outcome, as {@link #observer} hears it. */
  public record Chunk(String what, long runId, int rows) {}

  private final PurgeRepository purges;
  private final RetentionConfig config;
  private final Clock clock;
  private final Consumer<Chunk> observer;

  public Purger(PurgeRepository purges, RetentionConfig config) {
    this(purges, config, Clock.systemUTC(), chunk -> {});
  }

  /** A purger whose every delete statement is reported to {@code observer} (tests). */
  public Purger(
      PurgeRepository purges, RetentionConfig config, Clock clock, Consumer<Chunk> observer) {
    this.purges = purges;
    this.config = config;
    this.clock = clock;
    this.observer = observer;
  }

  /**
   * Purges until nothing due is left or {@code budget} has passed.
   *
   * @param done what an earlier attempt of the same call removed (its last heartbeat), added to
   * @param progress told the running total after each statement
   * @return the total; {@code more} if the budget ran out first
   */
  public PurgeReport purge(Duration budget, PurgeReport done, Consumer<PurgeReport> progress) {
    Instant deadline = clock.instant().plus(budget);
    Instant cutoff = clock.instant().minus(config.period());
    Tally tally = new Tally(done, progress);
    int chunk = Math.max(1, config.chunkSize());

    Set<Long> tried = new HashSet<>();
    for (List<Long> runs = fresh(purges.deletedRuns(RUNS_PER_LOOKUP), tried);
        !runs.isEmpty();
        runs = fresh(purges.deletedRuns(RUNS_PER_LOOKUP), tried)) {
      for (long runId : runs) {
        for (int rows = -1; rows != 0; ) {
          if (clock.instant().isAfter(deadline)) {
            return tally.more();
          }
          rows = purges.deleteBatchesOfDeletedRun(runId, chunk);
          tally.deletedRunBatches(new Chunk("deleted-run-batches", runId, rows));
        }
        tally.runDone(purges.forgetDeletedRun(runId));
      }
    }

    tried.clear();
    for (List<Long> runs = fresh(purges.runsEndedBefore(cutoff, RUNS_PER_LOOKUP), tried);
        !runs.isEmpty();
        runs = fresh(purges.runsEndedBefore(cutoff, RUNS_PER_LOOKUP), tried)) {
      for (long runId : runs) {
        for (int rows = -1; rows != 0; ) {
          if (clock.instant().isAfter(deadline)) {
            return tally.more();
          }
          rows = purges.deleteBatchesOfEndedRun(runId, cutoff, chunk);
          tally.endedRunBatches(new Chunk("ended-run-batches", runId, rows));
        }
        tally.runDone(purges.markBatchesPurged(runId, cutoff));
      }
    }

    for (int rows = -1; rows != 0; ) {
      if (clock.instant().isAfter(deadline)) {
        return tally.more();
      }
      rows = purges.deleteWebhookDeliveriesBefore(cutoff, chunk);
      tally.webhookRows(new Chunk("webhook-deliveries", 0, rows));
    }
    for (int rows = -1; rows != 0; ) {
      if (clock.instant().isAfter(deadline)) {
        return tally.more();
      }
      rows = purges.deleteWebhookEventsBefore(cutoff, chunk);
      tally.webhookRows(new Chunk("webhook-events", 0, rows));
    }
    for (int rows = -1; rows != 0; ) {
      if (clock.instant().isAfter(deadline)) {
        return tally.more();
      }
      rows = purges.deleteAuditEventsBefore(cutoff, chunk);
      tally.auditEvents(new Chunk("audit-events", 0, rows));
    }
    return tally.report;
  }

  /**
   * The runs of {@code found} not tried yet in this call, now marked tried: a run left as it was
   * (re-opened by a retry meanwhile, or deleted while being purged as ended) is looked at again by
   * the next call, not in a loop by this one.
   */
  private static List<Long> fresh(List<Long> found, Set<Long> tried) {
    return found.stream().filter(tried::add).toList();
  }

  /** The running total of one call. */
  private final class Tally {
    private final Consumer<PurgeReport> progress;
    private PurgeReport report;

    Tally(PurgeReport done, Consumer<PurgeReport> progress) {
      this.report =
          new PurgeReport(
              done.deletedRunBatches(),
              done.endedRunBatches(),
              done.runsDone(),
              done.webhookRows(),
              done.auditEvents(),
              false);
      this.progress = progress;
    }

    void deletedRunBatches(Chunk chunk) {
      add(chunk, new PurgeReport(chunk.rows(), 0, 0, 0, 0, false));
    }

    void endedRunBatches(Chunk chunk) {
      add(chunk, new PurgeReport(0, chunk.rows(), 0, 0, 0, false));
    }

    void webhookRows(Chunk chunk) {
      add(chunk, new PurgeReport(0, 0, 0, chunk.rows(), 0, false));
    }

    void auditEvents(Chunk chunk) {
      add(chunk, new PurgeReport(0, 0, 0, 0, chunk.rows(), false));
    }

    void runDone(int runs) {
      report = report.plus(new PurgeReport(0, 0, runs, 0, 0, false));
    }

    PurgeReport more() {
      report = report.plus(new PurgeReport(0, 0, 0, 0, 0, true));
      return report;
    }

    private void add(Chunk chunk, PurgeReport rows) {
      observer.accept(chunk);
      report = report.plus(rows);
      progress.accept(report);
    }
  }
}

package dev.dripline.spi;

import java.sql.Connection;

/**
 * A backfill over time (K4 in docs/spec.md): a run covers a time range cut into windows, and each
 * batch is one window {@code [start, end)}, planned without scanning any rows. A batch shows its
 * window as an inclusive key range of the key's type: a window of days {@code [2026-11-30,
 * 2026-12-01)} is the batch {@code ["2026-11-30", "2026-11-30"]}, an hour is {@code ["…T10:00:00Z",
 * "…T10:59:59.999999Z"]}.
 *
 * <p>Each batch runs in Dripline's transaction, which commits its writes together with the batch's
 * completion (as for a {@link TableBackfillDefinition}); processing a window twice must be harmless
 * (an upsert, say).
 */
public interface WindowedBackfillDefinition extends BackfillDefinition {

  /** The key: one timestamptz or date column, whose values the windows cover. */
  KeyColumn key();

  /**
   * The windows a run with {@code options} covers.
   *
   * @throws PermanentBackfillException when the options can never give windows (e.g. {@code to}
   *     before {@code from})
   * @throws Exception any other failure, retried by the engine
   */
  TimeWindows windows(BackfillContext context) throws Exception;

  /** One window per batch: a batch size has no other meaning here. */
  @Override
  default int defaultBatchSize() {
    return 1;
  }

  /**
   * Processes {@code window} inside {@code transaction}, which Dripline commits together with the
   * batch's completion, or rolls back.
   *
   * @throws PermanentBackfillException when retrying cannot help; the batch fails at once
   * @throws Exception any other failure, retried by the engine with backoff
   */
  void processBatch(BackfillContext context, TimeWindow window, Connection transaction)
      throws Exception;
}

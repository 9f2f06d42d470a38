package dev.dripline.workflows.retention;

/**
 * What one purge call removed, and whether it stopped with more to do (its time was up).
 *
 * @param deletedRunBatches batches of deleted runs
 * @param endedRunBatches batches of runs ended before the retention's cutoff
 * @param runsDone deleted runs forgotten and ended runs marked purged
 * @param webhookRows webhook deliveries and events older than the cutoff
 * @param auditEvents audit events older than the cutoff
 * @param more true if the call stopped before it had purged everything due
 */
public record PurgeReport(
    long deletedRunBatches,
    long endedRunBatches,
    long runsDone,
    long webhookRows,
    long auditEvents,
    boolean more) {

  /** Nothing removed yet. */
  public static final PurgeReport NONE = new PurgeReport(0, 0, 0, 0, 0, false);

  /** All rows removed. */
  public long rows() {
    return deletedRunBatches + endedRunBatches + webhookRows + auditEvents;
  }

  /** This report and {@code other} summed; {@code more} is {@code other}'s. */
  public PurgeReport plus(PurgeReport other) {
    return new PurgeReport(
        deletedRunBatches + other.deletedRunBatches,
        endedRunBatches + other.endedRunBatches,
        runsDone + other.runsDone,
        webhookRows + other.webhookRows,
        auditEvents + other.auditEvents,
        other.more);
  }
}

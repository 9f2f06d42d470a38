package dev.dripline.workflows.run;

/**
 * @param runId the run
 * @param token unique per claim of this run; a repeated call with it returns the same batches
 * @param limit most batches to claim
 * @param groupsFrom with groups: the lowest batch number to claim from (batches below it were
 *     handed to groups already); null: no groups, the lowest pending batches are claimed
 */
public record ClaimRequest(long runId, long token, int limit, Integer groupsFrom) {
  public ClaimRequest(long runId, long token, int limit) {
    this(runId, token, limit, null);
  }
}

package dev.dripline.workflows.run;

/**
 * How pending batches are cut into groups, one per batch activity, when the workflow hands each
 * slot's activity a group of consecutive batches: each slot gets its share of what is pending now,
 * at most {@link #MAX_GROUP} batches (an activity also ends its group at its chain time).
 */
public final class BatchGroups {
  /** Most batches in one group. */
  public static final int MAX_GROUP = 256;

  private BatchGroups() {}

  /** Batches per group when {@code pending} batches are pending and the cap is {@code cap}. */
  public static int size(int pending, int cap) {
    if (pending <= 0 || cap <= 0) {
      return 1;
    }
    return Math.max(1, Math.min(MAX_GROUP, (pending + cap - 1) / cap));
  }

  /** Pending batches to read to cut groups for a run whose cap is {@code cap}. */
  public static int lookahead(int cap) {
    return Math.min(Math.max(1, cap) * MAX_GROUP, 10_000);
  }
}

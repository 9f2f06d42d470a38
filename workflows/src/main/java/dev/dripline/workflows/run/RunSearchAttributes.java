package dev.dripline.workflows.run;

import io.temporal.common.SearchAttributeKey;

/** Dripline's search attributes; they must be registered on the Temporal server. */
public final class RunSearchAttributes {
  public static final SearchAttributeKey<String> BACKFILL =
      SearchAttributeKey.forKeyword("DriplineBackfill");
  public static final SearchAttributeKey<String> RUN_STATUS =
      SearchAttributeKey.forKeyword("DriplineRunStatus");
  public static final SearchAttributeKey<String> TARGET =
      SearchAttributeKey.forKeyword("DriplineTarget");

  private RunSearchAttributes() {}
}

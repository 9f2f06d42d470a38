package dev.dripline.app.run;

import dev.dripline.workflows.run.RunStatus;

/**
 * Filters and paging of {@code GET /api/runs}.
 *
 * @param status only runs of this status, or {@code null} for all
 * @param backfill only runs of this definition, or {@code null} for all
 * @param paging the page asked for
 */
record RunQuery(RunStatus status, String backfill, PageRequest paging) {}

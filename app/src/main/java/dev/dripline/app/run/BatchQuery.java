package dev.dripline.app.run;

import dev.dripline.workflows.run.BatchStatus;

/**
 * Filter and paging of {@code GET /api/runs/{id}/batches}.
 *
 * @param status only batches of this status, or {@code null} for all
 * @param paging the page asked for
 */
record BatchQuery(BatchStatus status, PageRequest paging, String key) {}

package dev.dripline.app.targets;

import dev.dripline.app.run.PageRequest;
import dev.dripline.workflows.targets.TargetState;

/**
 * Filters and paging of {@code GET /api/targets}.
 *
 * @param state only targets in this state, or {@code null} for all
 * @param group only targets of this group, or {@code null} for all
 * @param paging the page asked for
 */
record TargetQuery(TargetState state, String group, PageRequest paging) {}

package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.core.annotation.Nullable;

/**
 * A run's progress at one edge of a chart's time axis ({@link ProgressSampleRepository#atEdges}):
 * its latest sample at or before the edge, or nulls when it has none that early.
 *
 * @param edge the edge's index, from 0
 * @param processedKeys the sample's processed keys
 * @param completedBatches the sample's completed batches
 */
@Introspected
public record ProgressAtEdge(
    int edge, @Nullable Long processedKeys, @Nullable Long completedBatches) {}

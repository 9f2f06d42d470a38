package dev.dripline.store.metrics;

import io.micronaut.data.annotation.Embeddable;
import io.micronaut.data.annotation.EmbeddedId;
import io.micronaut.data.annotation.MappedEntity;
import io.micronaut.data.annotation.MappedProperty;
import java.time.Instant;

/**
 * A row of {@code metric_snapshots}: one series of the latest snapshot of the gauges derived from
 * Dripline's tables (written by the metrics workflow's activity, read by every process).
 *
 * @param series the series: metric name and its labels
 * @param value its value
 * @param computedAt when the snapshot was taken (one transaction writes every row with one time)
 */
@MappedEntity("metric_snapshots")
public record MetricSnapshot(@EmbeddedId Series series, double value, Instant computedAt) {
  /**
   * @param name the metric's name
   * @param labels its labels in the text form of {@link SnapshotSeries#label}, {@code ""} for none
   */
  @Embeddable
  public record Series(
      @MappedProperty("name") String name, @MappedProperty("labels") String labels) {}
}

package dev.dripline.metrics;

import dev.dripline.db.Database;
import dev.dripline.db.DatabaseException;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micronaut.context.BeanProvider;
import io.micronaut.scheduling.annotation.Scheduled;
import jakarta.inject.Singleton;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exports the latest snapshot of the PostgreSQL-derived gauges (table {@code metric_snapshots},
 * written by the metrics workflow's activity) through this process's meter registry, so every
 * process's {@code /prometheus} — app and worker alike — reports the same figures (PRODUCT §5).
 *
 * <p>Meters read an in-memory copy refreshed every few seconds, never the database: a scrape costs
 * nothing and cannot fail. A series with fixed labels but without a row reads 0. The series
 * labelled by backfill ({@link SnapshotSeries#LABELLED_BY_BACKFILL}) are registered when their row
 * appears and removed when it disappears, so the label set follows the snapshot. If the database
 * cannot be read, the last copy is kept.
 */
@Singleton
public class SnapshotGauges implements MeterBinder {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotGauges.class);

  // Lazy: the pool's own metrics bind to the registry this binder belongs to, so a direct
  // dependency on the database would be circular.
  private final BeanProvider<Database> database;
  private volatile Map<String, Double> values = Map.of();
  private volatile boolean lastRefreshFailed;
  private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();
  // Per registry: the backfill-labelled meters registered, by snapshot key.
  private final Map<MeterRegistry, Map<String, Meter>> labelled = new HashMap<>();

  public SnapshotGauges(BeanProvider<Database> database) {
    this.database = database;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    for (String status : SnapshotSeries.RUN_STATUSES) {
      gauge(
          registry,
          "dripline.runs",
          null,
          SnapshotSeries.RUNS,
          "status",
          status,
          "Runs per status");
    }
    for (String state : SnapshotSeries.TARGET_STATES) {
      gauge(
          registry,
          "dripline.targets",
          null,
          SnapshotSeries.TARGETS,
          "state",
          state,
          "Targets per state");
    }
    gauge(
        registry,
        "dripline.blocked.backlog",
        null,
        SnapshotSeries.BLOCKED_BACKLOG,
        null,
        null,
        "Live batches blocked behind healthy (not failing) targets");
    // Micrometer's Prometheus naming appends the base unit: ".age" + "seconds" → "_age_seconds".
    gauge(
        registry,
        "dripline.blocked.oldest.age",
        "seconds",
        SnapshotSeries.BLOCKED_OLDEST_AGE_SECONDS,
        null,
        null,
        "Age of the oldest live batch blocked behind a healthy target");
    gauge(
        registry,
        "dripline.failing.blocked.backlog",
        null,
        SnapshotSeries.FAILING_BLOCKED_BACKLOG,
        null,
        null,
        "Live batches blocked behind failing targets");
    gauge(
        registry,
        "dripline.stuck.targets",
        null,
        SnapshotSeries.STUCK_TARGETS,
        null,
        null,
        "Failing targets");
    gauge(
        registry,
        "dripline.stuck.oldest.age",
        "seconds",
        SnapshotSeries.STUCK_OLDEST_AGE_SECONDS,
        null,
        null,
        "Time since the earliest first failure among failing targets");
    // A counter: Prometheus appends "_total". Its value is the cluster-wide count kept in
    // PostgreSQL, so every process reports the same total.
    FunctionCounter.builder(
            "dripline.planning.failures",
            this,
            gauges -> gauges.value(SnapshotSeries.PLANNING_FAILURES_TOTAL, ""))
        .description("Failed planning attempts of targets")
        .register(registry);
    registries.add(registry);
    syncLabelled();
  }

  /**
   * Registers a meter for every backfill-labelled row of the copy not yet registered, and removes
   * those whose row is gone. Meters read the copy, like the fixed ones.
   */
  private synchronized void syncLabelled() {
    Map<String, Double> current = values;
    for (MeterRegistry registry : registries) {
      Map<String, Meter> meters = labelled.computeIfAbsent(registry, r -> new LinkedHashMap<>());
      for (String key : current.keySet()) {
        if (!meters.containsKey(key)) {
          Meter meter = registerLabelled(registry, key);
          if (meter != null) {
            meters.put(key, meter);
          }
        }
      }
      meters
          .entrySet()
          .removeIf(
              entry -> {
                if (current.containsKey(entry.getKey())) {
                  return false;
                }
                registry.remove(entry.getValue());
                return true;
              });
    }
  }

  /** The meter of one backfill-labelled row, or null if the key is not such a series. */
  private Meter registerLabelled(MeterRegistry registry, String key) {
    int separator = key.indexOf('\u0000');
    String series = key.substring(0, separator);
    String labels = key.substring(separator + 1);
    if (!SnapshotSeries.LABELLED_BY_BACKFILL.contains(series)) {
      return null;
    }
    Tags tags = Tags.empty();
    for (Map.Entry<String, String> label : SnapshotSeries.parseLabels(labels).entrySet()) {
      tags = tags.and(label.getKey(), label.getValue());
    }
    if (series.equals(SnapshotSeries.BATCHES_INFLIGHT)) {
      return Gauge.builder(
              "dripline.batches.inflight", this, gauges -> gauges.value(series, labels))
          .strongReference(true)
          .tags(tags)
          .description("Batches holding a slot (enqueued or running)")
          .register(registry);
    }
    // Prometheus appends "_total"; like the planning failures, the count is kept in PostgreSQL.
    return FunctionCounter.builder(
            "dripline.batches.finished", this, gauges -> gauges.value(series, labels))
        .tags(tags)
        .description("Batches whose outcome was recorded, by outcome")
        .register(registry);
  }

  private void gauge(
      MeterRegistry registry,
      String meterName,
      String baseUnit,
      String series,
      String labelKey,
      String labelValue,
      String description) {
    String labels = labelKey == null ? "" : SnapshotSeries.label(labelKey, labelValue);
    Gauge.Builder<SnapshotGauges> builder =
        Gauge.builder(meterName, this, gauges -> gauges.value(series, labels))
            .strongReference(true)
            .baseUnit(baseUnit)
            .description(description);
    if (labelKey != null) {
      builder.tag(labelKey, labelValue);
    }
    builder.register(registry);
  }

  /** The value of one series in the in-memory copy; 0 without a row. */
  public double value(String series, String labels) {
    return values.getOrDefault(series + "\u0000" + labels, 0.0);
  }

  /** Reads the whole snapshot table into the in-memory copy. */
  @Scheduled(fixedDelay = "1s", initialDelay = "1s")
  public void refresh() {
    try {
      values =
          database
              .get()
              .withConnection(
                  connection -> {
                    Map<String, Double> read = new HashMap<>();
                    try (PreparedStatement select =
                            connection.prepareStatement(
                                "select name, labels, value from metric_snapshots");
                        ResultSet rs = select.executeQuery()) {
                      while (rs.next()) {
                        read.put(
                            rs.getString("name") + "\u0000" + rs.getString("labels"),
                            rs.getDouble("value"));
                      }
                    }
                    return Map.copyOf(read);
                  });
      lastRefreshFailed = false;
      syncLabelled();
    } catch (DatabaseException | IllegalStateException e) {
      // Keep the last copy; say so once per outage rather than every few seconds.
      if (!lastRefreshFailed) {
        LOG.warn("Cannot read metric_snapshots; keeping the last values: {}", e.getMessage());
      }
      lastRefreshFailed = true;
    }
  }
}

package dev.dripline.metrics;

import dev.dripline.db.Database;
import dev.dripline.db.DatabaseException;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micronaut.context.BeanProvider;
import io.micronaut.scheduling.annotation.Scheduled;
import jakarta.inject.Singleton;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exports the latest snapshot of the PostgreSQL-derived gauges (table {@code metric_snapshots},
 * written by the metrics workflow's activity) through this process's meter registry, so every
 * process's {@code /prometheus} — app and worker alike — reports the same figures (PRODUCT §5).
 *
 * <p>Meters read an in-memory copy refreshed every few seconds, never the database: a scrape costs
 * nothing and cannot fail. A series without a row reads 0. If the database cannot be read, the last
 * copy is kept.
 */
@Singleton
public class SnapshotGauges implements MeterBinder {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotGauges.class);

  // Lazy: the pool's own metrics bind to the registry this binder belongs to, so a direct
  // dependency on the database would be circular.
  private final BeanProvider<Database> database;
  private volatile Map<String, Double> values = Map.of();
  private volatile boolean lastRefreshFailed;

  public SnapshotGauges(BeanProvider<Database> database) {
    this.database = database;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    for (String status : SnapshotSeries.RUN_STATUSES) {
      gauge(registry, "dripline.runs", null, SnapshotSeries.RUNS, "status", status);
    }
    for (String state : SnapshotSeries.TARGET_STATES) {
      gauge(registry, "dripline.targets", null, SnapshotSeries.TARGETS, "state", state);
    }
    gauge(registry, "dripline.blocked.backlog", null, SnapshotSeries.BLOCKED_BACKLOG, null, null);
    // Micrometer's Prometheus naming appends the base unit: ".age" + "seconds" → "_age_seconds".
    gauge(
        registry,
        "dripline.blocked.oldest.age",
        "seconds",
        SnapshotSeries.BLOCKED_OLDEST_AGE_SECONDS,
        null,
        null);
    gauge(
        registry,
        "dripline.failing.blocked.backlog",
        null,
        SnapshotSeries.FAILING_BLOCKED_BACKLOG,
        null,
        null);
    gauge(registry, "dripline.stuck.targets", null, SnapshotSeries.STUCK_TARGETS, null, null);
    gauge(
        registry,
        "dripline.stuck.oldest.age",
        "seconds",
        SnapshotSeries.STUCK_OLDEST_AGE_SECONDS,
        null,
        null);
    // A counter: Prometheus appends "_total". Its value is the cluster-wide count kept in
    // PostgreSQL, so every process reports the same total.
    FunctionCounter.builder(
            "dripline.planning.failures",
            this,
            gauges -> gauges.value(SnapshotSeries.PLANNING_FAILURES_TOTAL, ""))
        .description("Failed planning attempts of targets")
        .register(registry);
  }

  private void gauge(
      MeterRegistry registry,
      String meterName,
      String baseUnit,
      String series,
      String labelKey,
      String labelValue) {
    String labels = labelKey == null ? "" : SnapshotSeries.label(labelKey, labelValue);
    Gauge.Builder<SnapshotGauges> builder =
        Gauge.builder(meterName, this, gauges -> gauges.value(series, labels))
            .strongReference(true)
            .baseUnit(baseUnit);
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
    } catch (DatabaseException | IllegalStateException e) {
      // Keep the last copy; say so once per outage rather than every few seconds.
      if (!lastRefreshFailed) {
        LOG.warn("Cannot read metric_snapshots; keeping the last values: {}", e.getMessage());
      }
      lastRefreshFailed = true;
    }
  }
}

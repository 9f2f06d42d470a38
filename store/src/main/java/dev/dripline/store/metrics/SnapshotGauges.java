package dev.dripline.store.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micronaut.context.BeanProvider;
import io.micronaut.scheduling.annotation.Scheduled;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exports the latest snapshot of the PostgreSQL-derived gauges (table {@code metric_snapshots},
 * written by the metrics workflow's activity) through this process's meter registry, so every
 * process's {@code /prometheus} — app and worker alike — reports the same figures (spec §5).
 *
 * <p>Meters read an in-memory copy refreshed every second, never the database: a scrape costs
 * nothing and cannot fail. The process exports exactly the rows of the last snapshot it read, and
 * nothing before its first read: a fresh process that exported zeros would claim "no runs, nothing
 * blocked, nothing stuck" without having looked, and a counter exported at 0 and then at the
 * cluster's total would look to Prometheus like that many new failures. Series are registered when
 * their row appears and removed when it disappears (the snapshot always holds every fixed series,
 * zeros included, and one per backfill for the series labelled by backfill). If the database cannot
 * be read, the last copy is kept.
 *
 * <p>With the first read comes {@code dripline_metrics_snapshot_age_seconds}: how old the snapshot
 * this process serves is, i.e. now − its {@code computed_at}. Both instants are taken on
 * PostgreSQL's clock (the age is {@code now() - computed_at} in the reading query), and the time
 * since that read on this process's monotonic clock is added, so no host's wall clock enters it:
 * every replica reports the same age to within its refresh period, and a process that can no longer
 * read keeps ageing, as the figures it serves do. A table without a snapshot (the metrics workflow
 * never completed one) is infinitely old.
 */
@Singleton
public class SnapshotGauges implements MeterBinder {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotGauges.class);

  /** The key of the age meter among the snapshot's series keys (no row has an empty name). */
  private static final String AGE_KEY = "\u0000";

  /** How one series of the table is exported. */
  private record Export(String meterName, String baseUnit, boolean counter, String description) {}

  // Micrometer's Prometheus naming appends the base unit (".age" + "seconds" → "_age_seconds")
  // and "_total" to counters. The counters' values are cluster-wide counts kept in PostgreSQL, so
  // every process reports the same totals.
  private static final Map<String, Export> EXPORTS =
      Map.ofEntries(
          Map.entry(
              SnapshotSeries.RUNS, new Export("dripline.runs", null, false, "Runs per status")),
          Map.entry(
              SnapshotSeries.TARGETS,
              new Export("dripline.targets", null, false, "Targets per state")),
          Map.entry(
              SnapshotSeries.BLOCKED_BACKLOG,
              new Export(
                  "dripline.blocked.backlog",
                  null,
                  false,
                  "Live batches blocked behind healthy (not failing) targets")),
          Map.entry(
              SnapshotSeries.BLOCKED_OLDEST_AGE_SECONDS,
              new Export(
                  "dripline.blocked.oldest.age",
                  "seconds",
                  false,
                  "Age of the oldest live batch blocked behind a healthy target")),
          Map.entry(
              SnapshotSeries.FAILING_BLOCKED_BACKLOG,
              new Export(
                  "dripline.failing.blocked.backlog",
                  null,
                  false,
                  "Live batches blocked behind failing targets")),
          Map.entry(
              SnapshotSeries.STUCK_TARGETS,
              new Export("dripline.stuck.targets", null, false, "Failing targets")),
          Map.entry(
              SnapshotSeries.STUCK_OLDEST_AGE_SECONDS,
              new Export(
                  "dripline.stuck.oldest.age",
                  "seconds",
                  false,
                  "Time since the earliest first failure among failing targets")),
          Map.entry(
              SnapshotSeries.PLANNING_FAILURES_TOTAL,
              new Export(
                  "dripline.planning.failures", null, true, "Failed planning attempts of targets")),
          Map.entry(
              SnapshotSeries.BATCHES_INFLIGHT,
              new Export(
                  "dripline.batches.inflight",
                  null,
                  false,
                  "Batches holding a slot (enqueued or running)")),
          Map.entry(
              SnapshotSeries.BATCHES_FINISHED_TOTAL,
              new Export(
                  "dripline.batches.finished",
                  null,
                  true,
                  "Batches whose outcome was recorded, by outcome")),
          Map.entry(
              SnapshotSeries.RUNS_THROTTLED,
              new Export(
                  "dripline.runs.throttled",
                  null,
                  false,
                  "Running runs held by the brake or a health check: no new batch starts")),
          Map.entry(
              SnapshotSeries.THROTTLED_SECONDS_TOTAL,
              new Export(
                  "dripline.throttled",
                  "seconds",
                  true,
                  "Time runs were held by the brake or a health check")),
          Map.entry(
              SnapshotSeries.POOL_IN_USE,
              new Export(
                  "dripline.pool.in.use", null, false, "Batches holding a slot of the pool")),
          Map.entry(
              SnapshotSeries.POOL_WAITING,
              new Export(
                  "dripline.pool.waiting",
                  null,
                  false,
                  "Runs waiting in line for a slot of the pool")));

  /**
   * One read of the table.
   *
   * @param values value by series key ({@code name \0 labels})
   * @param ageAtRead the snapshot's age when it was read, in seconds on PostgreSQL's clock;
   *     infinite when the table held no snapshot
   * @param readAtNanos this process's monotonic clock just before the read
   */
  private record Reading(Map<String, Double> values, double ageAtRead, long readAtNanos) {}

  // Lazy: the pool's own metrics bind to the registry this binder belongs to, so a direct
  // dependency on the database would be circular.
  private final BeanProvider<MetricSnapshotRepository> snapshots;
  private final LongSupplier nanoTime;
  // Null until this process's first successful read.
  private volatile Reading reading;
  private volatile boolean lastRefreshFailed;
  private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();
  // Per registry: the meters registered, by series key.
  private final Map<MeterRegistry, Map<String, Meter>> registered = new HashMap<>();

  @Inject
  public SnapshotGauges(BeanProvider<MetricSnapshotRepository> snapshots) {
    this(snapshots, System::nanoTime);
  }

  /**
   * @param nanoTime this process's monotonic clock (tests pass their own)
   */
  public SnapshotGauges(BeanProvider<MetricSnapshotRepository> snapshots, LongSupplier nanoTime) {
    this.snapshots = snapshots;
    this.nanoTime = nanoTime;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    registries.add(registry);
    syncMeters();
  }

  /**
   * Registers a meter for every row of the last read not yet registered (and the age meter once
   * there was a read), and removes those whose row is gone.
   */
  private synchronized void syncMeters() {
    Reading current = reading;
    if (current == null) {
      return;
    }
    for (MeterRegistry registry : registries) {
      Map<String, Meter> meters = registered.computeIfAbsent(registry, r -> new LinkedHashMap<>());
      if (!meters.containsKey(AGE_KEY)) {
        meters.put(
            AGE_KEY,
            Gauge.builder("dripline.metrics.snapshot.age", this, SnapshotGauges::snapshotAgeSeconds)
                .strongReference(true)
                .baseUnit("seconds")
                .description(
                    "Time since the metrics snapshot this process serves was computed (infinite"
                        + " when none was ever computed)")
                .register(registry));
      }
      for (String key : current.values().keySet()) {
        if (!meters.containsKey(key)) {
          Meter meter = register(registry, key);
          if (meter != null) {
            meters.put(key, meter);
          }
        }
      }
      meters
          .entrySet()
          .removeIf(
              entry -> {
                if (entry.getKey().equals(AGE_KEY)
                    || current.values().containsKey(entry.getKey())) {
                  return false;
                }
                registry.remove(entry.getValue());
                return true;
              });
    }
  }

  /** The meter of one row, or null if this version does not export such a series. */
  private Meter register(MeterRegistry registry, String key) {
    int separator = key.indexOf('\u0000');
    String series = key.substring(0, separator);
    String labels = key.substring(separator + 1);
    Export export = EXPORTS.get(series);
    if (export == null) {
      return null;
    }
    Tags tags = Tags.empty();
    for (Map.Entry<String, String> label : SnapshotSeries.parseLabels(labels).entrySet()) {
      tags = tags.and(label.getKey(), label.getValue());
    }
    if (export.counter()) {
      return FunctionCounter.builder(
              export.meterName(), this, gauges -> gauges.value(series, labels))
          .tags(tags)
          .baseUnit(export.baseUnit())
          .description(export.description())
          .register(registry);
    }
    return Gauge.builder(export.meterName(), this, gauges -> gauges.value(series, labels))
        .strongReference(true)
        .tags(tags)
        .baseUnit(export.baseUnit())
        .description(export.description())
        .register(registry);
  }

  /**
   * The value of one series in the last snapshot read; NaN before the first read or without a row
   * (never a zero nobody computed).
   */
  public double value(String series, String labels) {
    Reading current = reading;
    return current == null
        ? Double.NaN
        : current.values().getOrDefault(series + "\u0000" + labels, Double.NaN);
  }

  /**
   * How old the snapshot this process serves is, in seconds: its age when read (PostgreSQL's clock)
   * plus the time since (this process's monotonic clock); NaN before the first read, infinite when
   * the table held no snapshot.
   */
  public double snapshotAgeSeconds() {
    Reading current = reading;
    if (current == null) {
      return Double.NaN;
    }
    long sinceRead = Math.max(0, nanoTime.getAsLong() - current.readAtNanos());
    return current.ageAtRead() + sinceRead / 1e9;
  }

  /** Reads the whole snapshot table into the in-memory copy. */
  @Scheduled(fixedDelay = "1s", initialDelay = "1s")
  public void refresh() {
    try {
      MetricSnapshotRepository repository = snapshots.get();
      long readAt = nanoTime.getAsLong();
      Map<String, Double> values = new HashMap<>();
      double age = Double.POSITIVE_INFINITY;
      for (MetricSnapshotRepository.Aged row : repository.readAll()) {
        values.put(row.name() + "\u0000" + row.labels(), row.value());
        // One transaction writes every row with one computed_at.
        age = Math.min(age, row.age());
      }
      reading = new Reading(Map.copyOf(values), Math.max(0, age), readAt);
      lastRefreshFailed = false;
      syncMeters();
    } catch (RuntimeException e) {
      // PostgreSQL unreachable (the pool's timeout), a failed statement, or no repository yet: keep
      // the last copy; say so once per outage rather than every second.
      if (!lastRefreshFailed) {
        LOG.warn("Cannot read metric_snapshots; keeping the last values: {}", e.getMessage());
      }
      lastRefreshFailed = true;
    }
  }
}

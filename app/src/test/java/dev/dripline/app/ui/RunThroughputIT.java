package dev.dripline.app.ui;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.TestData;
import dev.dripline.app.run.RunDesk;
import dev.dripline.app.ui.ThroughputChart.Bar;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.ProgressSampleRepository;
import io.micronaut.context.annotation.Property;
import io.micronaut.core.type.Argument;
import io.micronaut.data.annotation.Query;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The run page's throughput chart read from progress samples ({@link RunThroughput}) against real
 * PostgreSQL: a long run's series is right over its whole life, read with one index probe per bar,
 * and a run without samples gets the chart of its last completed batches.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class RunThroughputIT {
  private static final Duration INTERVAL = Duration.ofSeconds(10);
  private static final Instant FIRST = Instant.parse("2031-05-01T00:00:00Z");
  private static final long DAY = 86_400;

  @Inject Database database;
  @Inject RunDesk desk;
  @Inject JsonMapper json;

  private TestData data;
  private final String backfill = TestData.uniqueName();

  @BeforeEach
  void setUp() {
    data = new TestData(database);
    data.definition(backfill, 10, null);
  }

  @AfterEach
  void tearDown() {
    data.cleanUp(backfill);
  }

  /**
   * Ten days sampled every 10 s (86,400 samples): 60 keys a minute for five days, then 120. The
   * chart has 40 bars of 6 h, each with its rate, the last one ending at the run's counter.
   */
  @Test
  void aLongRunsSeriesCoversItsWholeLifeAndEachBarHasItsRate() throws Exception {
    long id = data.run(backfill, "running", "{\"items\":5}");
    Instant started = FIRST.plusSeconds(3);
    data.sql("update runs set started_at = ? where id = ?", java.sql.Timestamp.from(started), id);
    sampleTenDays(id);
    Instant end = FIRST.plusSeconds(10 * DAY);
    RunThroughput throughput = new RunThroughput(desk, INTERVAL, Clock.fixed(end, ZoneOffset.UTC));

    List<Bar> bars = throughput.sampled(id, started, end, keysAt(10 * DAY));

    assertThat(bars).hasSize(40);
    assertThat(bars.get(0).start()).isEqualTo(FIRST);
    assertThat(bars.get(39).end()).isEqualTo(end);
    List<Double> rates = new ArrayList<>();
    for (Bar bar : bars) {
      assertThat(Duration.between(bar.start(), bar.end())).isEqualTo(Duration.ofHours(6));
      rates.add(bar.perMinute());
    }
    assertThat(rates.subList(0, 20)).containsOnly(60.0);
    assertThat(rates.subList(20, 40)).containsOnly(120.0);
    assertThat(ThroughputChart.svg(bars)).contains(">120/min</text>", "<title>60.0/min");
  }

  /** Each edge is one probe of the primary key: 40 loops of at most one row, no sequential scan. */
  @Test
  void theSeriesIsReadWithOneIndexProbePerEdge() throws Exception {
    long id = data.run(backfill, "running", "{\"items\":5}");
    sampleTenDays(id);
    String sql =
        ProgressSampleRepository.class
            .getMethod("atEdges", long.class, Instant.class, long.class, int.class)
            .getAnnotation(Query.class)
            .value()
            .replace(":runId", Long.toString(id))
            .replace(":first", "'" + FIRST + "'")
            .replace(":stepMillis", Long.toString(Duration.ofHours(6).toMillis()))
            .replace(":edges", "40");

    String explained =
        database.withConnection(
            connection -> {
              try (Statement s = connection.createStatement()) {
                s.execute("analyze run_progress_samples");
                try (ResultSet rs =
                    s.executeQuery("explain (analyze, buffers, format json) " + sql)) {
                  rs.next();
                  return rs.getString(1);
                }
              }
            });
    List<Map<String, Object>> top =
        json.readValue(explained, Argument.listOf(Argument.mapOf(String.class, Object.class)));
    @SuppressWarnings("unchecked")
    Map<String, Object> plan = (Map<String, Object>) top.get(0).get("Plan");

    List<Map<String, Object>> nodes = new ArrayList<>();
    collect(plan, nodes);
    assertThat(nodes).noneMatch(n -> String.valueOf(n.get("Node Type")).contains("Seq Scan"));
    Map<String, Object> probe =
        nodes.stream()
            .filter(n -> "run_progress_samples".equals(n.get("Relation Name")))
            .findFirst()
            .orElseThrow();
    assertThat(String.valueOf(probe.get("Node Type"))).startsWith("Index");
    assertThat(((Number) probe.get("Actual Loops")).longValue()).isEqualTo(40);
    assertThat(((Number) probe.get("Actual Rows")).doubleValue()).isLessThanOrEqualTo(1.0);
    assertThat(((Number) plan.get("Actual Rows")).longValue()).isEqualTo(40);
  }

  /** A run without samples (just started, or run before samples were taken). */
  @Test
  void aRunWithoutSamplesGetsTheChartOfItsLastCompletedBatches() {
    long id = data.run(backfill, "completed", "{\"items\":50}");
    data.batches(id, "completed", "completed", "completed", "failed");
    data.sql("update runs set started_at = now() - interval '3 days' where id = ?", id);
    data.sql(
        "update batches set finished_at = now() - make_interval(secs => number) where run_id = ?",
        id);
    RunThroughput throughput = new RunThroughput(desk, INTERVAL, Clock.systemUTC());

    List<Bar> bars = throughput.bars(desk.get(id));

    assertThat(throughput.sampled(id, Instant.now().minusSeconds(3 * DAY), Instant.now(), 30))
        .isEmpty();
    assertThat(bars)
        .isNotEmpty()
        .isEqualTo(
            ThroughputChart.ofCompletions(desk.recentCompletions(id, RunThroughput.CHART_BATCHES)));
    assertThat(bars.stream().mapToLong(Bar::keys).sum()).isEqualTo(30);
  }

  /** Run {@code id}'s processed keys {@code s} seconds after {@link #FIRST}. */
  private static long keysAt(long s) {
    long half = 5 * DAY;
    return s < half ? s : half + 2 * (s - half);
  }

  /** A sample every 10 s from 10 s after {@link #FIRST} for ten days, as {@link #keysAt}. */
  private void sampleTenDays(long id) {
    data.sql(
        "insert into run_progress_samples (run_id, sampled_at, processed_keys, completed_batches)"
            + " select ?, cast(? as timestamptz) + s * interval '1 second',"
            + " case when s < ? then s else ? + 2 * (s - ?) end, s / 10"
            + " from generate_series(10, ?, 10) s",
        id,
        java.sql.Timestamp.from(FIRST),
        5 * DAY,
        5 * DAY,
        5 * DAY,
        10 * DAY);
  }

  @SuppressWarnings("unchecked")
  private static void collect(Map<String, Object> node, List<Map<String, Object>> into) {
    into.add(node);
    Object children = node.get("Plans");
    if (children instanceof List<?> list) {
      for (Object child : list) {
        collect((Map<String, Object>) child, into);
      }
    }
  }
}

package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.heartbeat.HeartbeatTicker;
import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.activities.testing.TupleRowsBackfill;
import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.spi.Key;
import dev.dripline.spi.TableScope;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.db.Database;
import dev.dripline.store.run.BatchRepository;
import dev.dripline.store.run.BatchView;
import dev.dripline.store.run.RunRepository;
import dev.dripline.workflows.run.BatchOutcome;
import dev.dripline.workflows.run.BatchRef;
import dev.dripline.workflows.run.BatchResult;
import dev.dripline.workflows.run.BatchWork;
import dev.dripline.workflows.run.PlanPage;
import dev.dripline.workflows.run.PlanRequest;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Keys of other types than {@code long} (K1, K3 in docs/spec.md), end to end through planning and
 * batches on PostgreSQL: a table definition keyed by {@code (grp text, n integer)}, whose text
 * column has a linguistic collation where one is installed, so that its order differs from the
 * bytes' ("é" sorts between "e" and "f").
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class TypedKeysIT {
  @Inject RunFixtures fixtures;
  @Inject TupleRowsBackfill tuples;
  @Inject Database database;
  @Inject RunRepository runs;
  @Inject BatchRepository batchStore;
  @Inject DataTransactions transactions;
  @Inject BackfillRegistry registry;
  @Inject RunOptionsReader optionsReader;
  @Inject EngineConfig engine;
  @Inject HeartbeatTicker ticker;
  @Inject BatchExecution execution;

  private PlanningActivitiesImpl planning;

  @BeforeEach
  void setUp() {
    planning =
        new PlanningActivitiesImpl(
            database,
            runs,
            batchStore,
            transactions,
            registry,
            optionsReader,
            engine,
            ticker,
            Duration.ofHours(1));
  }

  @AfterEach
  void cleanUp() {
    fixtures.deleteCreated();
  }

  private static List<Object[]> rows(Object... pairs) {
    List<Object[]> rows = new ArrayList<>();
    for (int i = 0; i < pairs.length; i += 2) {
      rows.add(new Object[] {pairs[i], pairs[i + 1]});
    }
    return rows;
  }

  private void planAll(long runId) {
    for (int i = 0; i < 1_000; i++) {
      PlanPage page = planning.planNextPage(new PlanRequest(runId, 2));
      if (page.done()) {
        return;
      }
    }
    throw new AssertionError("planning did not finish");
  }

  /** The set's keys in the table's own order (its collation's), as the scan must list them. */
  private List<Key> keysInTableOrder(String set) {
    List<Key> keys = new ArrayList<>();
    for (Map<String, Object> row :
        fixtures.rows(
            "select grp, n from test_tuple_rows where set_name = ? order by grp, n", set)) {
      keys.add(TupleRowsBackfill.KEY.key(row.get("grp"), row.get("n")));
    }
    return keys;
  }

  private List<BatchView> batches(long runId) {
    return batchStore.page(runId, 1_000, 0);
  }

  @Test
  void aTupleKeyIsPlannedInTheTablesOrderWithBoundariesInsideAGroupAndEachRowVisitedOnce() {
    tuples.rows(
        "tuple", rows("e", 1, "e", 2, "e", 3, "e", 4, "é", 1, "é", 2, "f", 1, "f", 2, "日本", 7));
    long runId = fixtures.run(TupleRowsBackfill.NAME, "running", "{\"set\":\"tuple\"}", 3, null);

    planAll(runId);

    List<Key> keys = keysInTableOrder("tuple");
    List<BatchView> batches = batches(runId);
    assertThat(batches).hasSize(3);
    for (int i = 0; i < batches.size(); i++) {
      BatchView batch = batches.get(i);
      assertThat(batch.number()).isEqualTo(i + 1);
      assertThat(batch.startKey()).isEqualTo(keys.get(3 * i));
      assertThat(batch.endKey()).isEqualTo(keys.get(Math.min(3 * i + 2, keys.size() - 1)));
    }
    // The first batch ends inside group "e", the second starts there.
    assertThat(batches.get(0).endKey()).isEqualTo(Key.of("e", 3));
    assertThat(batches.get(1).startKey()).isEqualTo(Key.of("e", 4));
    assertThat(fixtures.runRow(runId)).containsEntry("total_keys", 9L);

    for (BatchView batch : batches) {
      fixtures.setBatchStatus(runId, batch.number(), "enqueued");
      BatchResult result =
          execution.process(
              new BatchWork(
                  runId,
                  TupleRowsBackfill.NAME,
                  new BatchRef(
                      batch.number(),
                      batch.startKey().toString(),
                      batch.endKey().toString(),
                      batch.size())));
      assertThat(result.outcome()).isEqualTo(BatchOutcome.COMPLETED);
    }
    assertThat(
            fixtures.rows(
                "select grp, n, visits from test_tuple_rows where set_name = 'tuple'"
                    + " and visits <> 1"))
        .isEmpty();
    assertThat(fixtures.runRow(runId)).containsEntry("processed_keys", 9L);
  }

  @Test
  void theKeyScanIsAnIndexScanOnTheKey() {
    List<Object[]> many = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      many.add(new Object[] {"g" + (i % 100), i});
    }
    tuples.rows("explain", many);
    fixtures.update("analyze test_tuple_rows");
    KeyedBackfill.TableKeys table =
        (KeyedBackfill.TableKeys) registry.require(TupleRowsBackfill.NAME);
    String scan = table.scanSql(false, TableScope.of("set_name = ?", "explain"));

    List<Map<String, Object>> plan =
        fixtures.rows(
            "explain (format text) "
                + scan.replaceFirst("\\(\\?, \\?\\)", "('a', 0)")
                    .replaceFirst("\\?", "'explain'")
                    .replaceFirst("\\?", "100"));

    StringBuilder text = new StringBuilder();
    plan.forEach(row -> text.append(row.values().iterator().next()).append('\n'));
    assertThat(text).containsPattern("Index (Only )?Scan using test_tuple_rows_pkey");
  }
}

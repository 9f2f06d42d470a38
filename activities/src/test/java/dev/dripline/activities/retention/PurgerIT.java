package dev.dripline.activities.retention;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.activities.testing.RunFixtures;
import dev.dripline.runtime.config.RetentionConfig;
import dev.dripline.store.retention.PurgeRepository;
import dev.dripline.workflows.retention.PurgeReport;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The purge (spec D5) on the test database: what it removes, in chunks no larger than the chunk
 * size, each chunk a statement of its own (heard by the purger's observer), and what it keeps. Runs
 * are ended in the past by setting {@code finished_at} back, never by waiting.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class PurgerIT {
  private static final int CHUNK = 7;
  private static final Duration RETENTION = Duration.ofDays(30);

  private final String tag = "purge-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<Purger.Chunk> chunks = new CopyOnWriteArrayList<>();

  @Inject RunFixtures fixtures;
  @Inject PurgeRepository purges;

  private Purger purger() {
    return new Purger(
        purges,
        new RetentionConfig(RETENTION, CHUNK, Duration.ofHours(1), false),
        Clock.systemUTC(),
        chunks::add);
  }

  @AfterEach
  void tearDown() {
    fixtures.update("delete from audit_events where actor = ?", tag);
    fixtures.update("delete from webhook_endpoints where url = ?", "http://" + tag);
    fixtures.update("delete from webhook_events where type = ?", tag);
    fixtures.deleteCreated();
  }

  private long endedRun(String status, int batches, Duration endedAgo) {
    long id = fixtures.run(status, "{\"items\":1}", 1, null);
    fixtures.batches(id, batches, 1, status.equals("completed") ? "completed" : "failed");
    fixtures.update(
        "update runs set finished_at = now() - cast(? as interval) where id = ?",
        endedAgo.toSeconds() + " seconds",
        id);
    return id;
  }

  private long batches(long runId) {
    return ((Number)
            fixtures.row("select count(*) as n from batches where run_id = ?", runId).get("n"))
        .longValue();
  }

  private List<Purger.Chunk> chunksOf(long runId) {
    return chunks.stream().filter(chunk -> chunk.runId() == runId).toList();
  }

  private PurgeReport purgeAll() {
    PurgeReport report = purger().purge(Duration.ofMinutes(5), PurgeReport.NONE, total -> {});
    assertThat(report.more()).isFalse();
    return report;
  }

  @Test
  void runsEndedBeforeTheRetentionLoseTheirBatchesInChunksWhileNewerAndRunningRunsKeepTheirs() {
    long old = endedRun("completed", 50, RETENTION.plusDays(10));
    long oldFailed = endedRun("failed", 15, RETENTION.plusDays(1));
    long recent = endedRun("completed", 50, RETENTION.minusDays(1));
    long running = fixtures.runningRun(50, 1);
    fixtures.batches(running, 50, 1, "pending");
    // A running run that started long ago is not ended, whatever its dates say.
    fixtures.update(
        "update runs set created_at = now() - interval '90 days',"
            + " started_at = now() - interval '90 days' where id = ?",
        running);

    purgeAll();

    assertThat(batches(old)).isZero();
    assertThat(batches(oldFailed)).isZero();
    assertThat(batches(recent)).isEqualTo(50);
    assertThat(batches(running)).isEqualTo(50);
    // Ceil(50 / 7) chunks of at most 7 rows, then the one that found none.
    assertThat(chunksOf(old))
        .extracting(Purger.Chunk::rows)
        .containsExactly(7, 7, 7, 7, 7, 7, 7, 1, 0);
    assertThat(chunksOf(oldFailed)).extracting(Purger.Chunk::rows).containsExactly(7, 7, 1, 0);
    assertThat(chunksOf(recent)).isEmpty();
    assertThat(chunksOf(running)).isEmpty();
    assertThat(chunks).allSatisfy(chunk -> assertThat(chunk.rows()).isBetween(0, CHUNK));
    // The run's record stays, marked purged; a second purge has nothing of it to do.
    assertThat(fixtures.runRow(old).get("status")).isEqualTo("completed");
    assertThat(fixtures.runRow(old).get("batches_purged_at")).isNotNull();
    assertThat(fixtures.runRow(recent).get("batches_purged_at")).isNull();
    chunks.clear();
    purgeAll();
    assertThat(chunksOf(old)).isEmpty();
  }

  @Test
  void aDeletedRunsBatchesGoInChunksFirstAndItsTombstoneLast() {
    long old = endedRun("completed", 10, RETENTION.plusDays(1));
    long deleted = endedRun("completed", 30, Duration.ofMinutes(1));
    fixtures.update("delete from runs where id = ?", deleted);
    assertThat(batches(deleted)).as("the run's row goes alone").isEqualTo(30);
    assertThat(fixtures.row("select 1 from run_purges where run_id = ?", deleted)).isNotNull();

    PurgeReport report = purgeAll();

    assertThat(batches(deleted)).isZero();
    assertThat(fixtures.row("select 1 from run_purges where run_id = ?", deleted)).isNull();
    assertThat(chunksOf(deleted)).extracting(Purger.Chunk::rows).containsExactly(7, 7, 7, 7, 2, 0);
    assertThat(chunks.indexOf(chunksOf(deleted).get(0)))
        .as("deleted runs come before runs past the retention")
        .isLessThan(chunks.indexOf(chunksOf(old).get(0)));
    assertThat(report.deletedRunBatches()).isGreaterThanOrEqualTo(30);
  }

  @Test
  void aPurgeWhoseTimeRanOutStopsBetweenChunksAndTheNextGoesOnFromWhatIsLeft() {
    long old = endedRun("completed", 20, RETENTION.plusDays(1));
    List<PurgeReport> beats = new CopyOnWriteArrayList<>();

    PurgeReport first = purger().purge(Duration.ZERO.minusMillis(1), PurgeReport.NONE, beats::add);

    assertThat(first.more()).isTrue();
    assertThat(batches(old)).isEqualTo(20);
    PurgeReport rest = purger().purge(Duration.ofMinutes(5), first, beats::add);
    assertThat(rest.more()).isFalse();
    assertThat(batches(old)).isZero();
    assertThat(beats).isNotEmpty();
    assertThat(beats.get(beats.size() - 1).endedRunBatches()).isGreaterThanOrEqualTo(20);
  }

  @Test
  void webhookEventsOlderThanTheRetentionGoWithTheirDeliveriesAndNewerOnesStay() {
    fixtures.update(
        "insert into webhook_endpoints (url, events, secret) values (?, array[?], 'whsec_x')",
        "http://" + tag,
        tag);
    fixtures.update(
        "insert into webhook_events (type, data, created_at) select ?, '{}',"
            + " now() - interval '40 days' from generate_series(1, 10)",
        tag);
    fixtures.update("insert into webhook_events (type, data) values (?, '{}')", tag);
    fixtures.update(
        "insert into webhook_deliveries (endpoint_id, event_id, status, created_at)"
            + " select p.id, e.id, 'delivered', e.created_at from webhook_endpoints p"
            + " cross join webhook_events e where p.url = ? and e.type = ?",
        "http://" + tag,
        tag);

    purgeAll();

    assertThat(count("select count(*) as n from webhook_events where type = ?")).isEqualTo(1);
    assertThat(
            count(
                "select count(*) as n from webhook_deliveries d join webhook_events e"
                    + " on e.id = d.event_id where e.type = ?"))
        .isEqualTo(1);
    assertThat(chunks.stream().filter(chunk -> chunk.what().startsWith("webhook-")))
        .isNotEmpty()
        .allSatisfy(chunk -> assertThat(chunk.rows()).isLessThanOrEqualTo(CHUNK));
  }

  private long count(String sql) {
    return ((Number) fixtures.row(sql, tag).get("n")).longValue();
  }

  @Test
  void auditEventsOlderThanTheRetentionGoAndNewerOnesStay() {
    fixtures.update(
        "insert into audit_events (at, actor, action, outcome)"
            + " select now() - interval '40 days', ?, 'run.stop', 'accepted'"
            + " from generate_series(1, 10)",
        tag);
    fixtures.update(
        "insert into audit_events (actor, action, outcome) values (?, 'run.stop', 'accepted')",
        tag);

    purgeAll();

    assertThat(
            ((Number)
                    fixtures
                        .row("select count(*) as n from audit_events where actor = ?", tag)
                        .get("n"))
                .longValue())
        .isEqualTo(1);
    assertThat(chunks.stream().filter(chunk -> chunk.what().equals("audit-events")))
        .allSatisfy(chunk -> assertThat(chunk.rows()).isLessThanOrEqualTo(CHUNK));
  }
}

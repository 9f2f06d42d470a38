package dev.dripline.standalone;

import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * F3 — PostgreSQL outage. App and worker JVMs run on the dedicated fault cluster ({@link
 * FaultPostgres}, never the shared one; they migrate its database at start-up). Injects: {@code
 * pg_ctlcluster … stop} (fast shutdown: every session of app, worker and witness is ended) in the
 * middle of two runs (normalize-emails and an example.sleep witness, cap 8), {@link
 * FaultSizes#outageSeconds()} seconds down (30 in the full variant), then {@code start}.
 *
 * <p>Asserts afterwards: both runs completed with exact counts ({@link FaultRun#assertExact}); the
 * cap held (slot holders sampled ≤ 8, witness {@code max_seen} ≤ 8, no execution left counted);
 * every seeded row normalised; app and worker still alive — their pools reconnected and no batch
 * failed for the outage.
 */
class F3PostgresOutageIT {
  private final String tag = "f3-" + UUID.randomUUID().toString().substring(0, 8);
  private FaultPostgres postgres;
  private FaultStack stack;

  @AfterEach
  void stopProcesses() throws Exception {
    try {
      if (stack != null) {
        stack.close();
      }
    } finally {
      if (postgres != null) {
        postgres.close();
      }
    }
  }

  @Test
  void runsCompleteExactlyAcrossAPostgresOutage() throws Exception {
    postgres = FaultPostgres.acquire();
    postgres.ensureUp();
    stack =
        new FaultStack(
                tag,
                postgres.sql().url(),
                System.getenv().getOrDefault("DRIPLINE_TEST_TEMPORAL_ADDRESS", "127.0.0.1:7243"),
                Map.of())
            .start();
    int outageSeconds = FaultSizes.current().outageSeconds();
    FaultScenario.run(
        stack,
        "F3",
        tag,
        () -> {
          postgres.stop();
          Thread.sleep(outageSeconds * 1000L);
          postgres.start();
        });
  }
}

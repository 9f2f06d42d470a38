package dev.dripline.standalone;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * D1 — the services of a real Temporal cluster fail one at a time. On the multi-service cluster on
 * PostgreSQL that bin/dripline-test prepares ({@link LocalCluster}: frontend, history, matching and
 * worker as separate processes), an app and a worker JVM ({@link FaultStack}) run three runs at
 * once per case ({@link FaultScenario}: normalize-emails, order-lines and an example.sleep witness,
 * cap 8), and mid-run one service gets SIGKILL, stays down {@link FaultSizes#temporalDownSeconds()}
 * seconds and is started again: history, then matching, then the frontend.
 *
 * <p>Asserts afterwards, per case: every run completed within the bound, with exact counts ({@link
 * FaultRun#assertExact}: every batch completed and counted once); the cap held (slot holders
 * sampled ≤ 8, witness {@code max_seen} ≤ 8); app and worker still alive. Prints how long the
 * service took to be back and batches to complete again. Skipped when the cluster was not built.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterFaultsIT {
  private final String tag = "d1-" + UUID.randomUUID().toString().substring(0, 8);
  private final Optional<String> unavailable = LocalCluster.unavailable();
  private LocalCluster cluster;
  private FaultStack stack;

  @BeforeAll
  void startClusterAndStack() throws Exception {
    if (unavailable.isPresent()) {
      return;
    }
    cluster = LocalCluster.fromEnvironment();
    long start = System.nanoTime();
    cluster.start();
    FaultRun.record(
        String.format(
            "D1 cluster %s started (four processes, namespace, search attributes) in %.1f s",
            cluster.address(), (System.nanoTime() - start) / 1e9));
    stack = new FaultStack(tag, TestDb.URL, cluster.address(), Map.of()).start();
  }

  /** Each case is reported skipped, with the reason, when there is no cluster. */
  @BeforeEach
  void needsTheCluster() {
    assumeTrue(unavailable.isEmpty(), unavailable.orElse(""));
  }

  @AfterAll
  void stopAll() {
    try {
      if (stack != null) {
        stack.close();
      }
    } finally {
      if (cluster != null) {
        cluster.close();
      }
    }
  }

  @Test
  @Order(1)
  void runsCompleteExactlyAcrossAKilledHistoryService() throws Exception {
    killAndRestart("history");
  }

  @Test
  @Order(2)
  void runsCompleteExactlyAcrossAKilledMatchingService() throws Exception {
    killAndRestart("matching");
  }

  @Test
  @Order(3)
  void runsCompleteExactlyAcrossARestartedFrontend() throws Exception {
    killAndRestart("frontend");
  }

  private void killAndRestart(String service) throws Exception {
    int downSeconds = FaultSizes.current().temporalDownSeconds();
    String testCase = "D1-" + service;
    FaultScenario.run(
        stack,
        testCase,
        tag + "-" + service.charAt(0),
        () -> {
          cluster.kill(service);
          Thread.sleep(downSeconds * 1000L);
          double healthy = cluster.startService(service);
          FaultRun.record(
              String.format(
                  "%s %s killed, down %d s, cluster healthy %.1f s after its start",
                  testCase, service, downSeconds, healthy));
        });
  }
}

package dev.dripline.standalone;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * What a fault-injection test runs Dripline as: an app JVM ({@code AppApplication}, HTTP on a free
 * port) and a worker JVM ({@code WorkerApplication}), separate processes on one database and one
 * Temporal server, polling a task queue of their own. The test kills and restarts them, or the
 * services under them, and checks the outcome over the app's API and with SQL.
 */
final class FaultStack implements RunHost, AutoCloseable {
  private final Sql sql;
  private final DriplineProcess app;
  private final DriplineProcess worker;
  private final Api api;
  private int workerStarts;

  /**
   * @param tag names the task queue and the processes' logs
   * @param dbUrl the database both processes use (they migrate it on start-up)
   * @param temporalAddress the Temporal frontend both use
   * @param workerEnv further environment of the worker, over the fault defaults below
   */
  FaultStack(String tag, String dbUrl, String temporalAddress, Map<String, String> workerEnv)
      throws IOException {
    this.sql = new Sql(dbUrl);
    Map<String, String> common = new HashMap<>();
    common.put("DRIPLINE_DB_URL", dbUrl);
    common.put("DRIPLINE_DB_USER", "dripline");
    common.put("DRIPLINE_DB_PASSWORD", "dripline");
    common.put("DRIPLINE_DB_POOL_SIZE", "20");
    common.put("TEMPORAL_ADDRESS", temporalAddress);
    common.put("DRIPLINE_TASK_QUEUE", "dripline-" + tag);
    Map<String, String> workerAll = new HashMap<>(common);
    // A killed worker's attempts are retried within seconds; a workflow execution continues as
    // new every 200 batches, so kills also land around continue-as-new.
    workerAll.put("DRIPLINE_BATCH_HEARTBEAT_TIMEOUT", "3s");
    workerAll.put("DRIPLINE_BATCH_RETRY_INITIAL_INTERVAL", "200ms");
    workerAll.put("DRIPLINE_BATCH_RETRY_MAX_INTERVAL", "2s");
    workerAll.put("DRIPLINE_MAX_BATCHES_PER_EXECUTION", "200");
    workerAll.put("DRIPLINE_METRICS_INTERVAL", "2s");
    workerAll.putAll(workerEnv);
    int port = LocalPorts.free();
    this.app = DriplineProcess.app(tag + "-app", port, common);
    this.worker = DriplineProcess.worker(tag + "-worker", workerAll);
    this.api = new Api(DriplineProcess.local(port));
  }

  /** Starts the worker and the app; returns once the app answers and the catalogue is in. */
  FaultStack start() {
    startWorker();
    app.start();
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(500))
        .ignoreExceptions()
        .failFast("the app died:\n" + app.log(), () -> !app.alive())
        .until(
            () ->
                api.get("/api/backfills").status() == 200
                    && sql.queryLong(
                            "select count(*) from backfill_definitions where name in"
                                + " ('example.sleep', 'example.normalize-emails')")
                        == 2);
    return this;
  }

  @Override
  public Api api() {
    return api;
  }

  @Override
  public Sql sql() {
    return sql;
  }

  DriplineProcess worker() {
    return worker;
  }

  DriplineProcess app() {
    return app;
  }

  void startWorker() {
    workerStarts++;
    worker.start();
  }

  int workerStarts() {
    return workerStarts;
  }

  /** SIGKILL to the worker JVM. */
  void killWorker() {
    worker.kill();
  }

  @Override
  public void close() {
    try {
      worker.kill();
    } finally {
      app.kill();
    }
  }
}

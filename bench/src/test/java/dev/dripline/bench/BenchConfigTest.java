package dev.dripline.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class BenchConfigTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();
  private int exitCode;

  /** Parses as BenchMain does; null when picocli printed help or an error instead. */
  private BenchConfig parse(String... args) {
    CommandLine cli = BenchConfig.commandLine(args);
    cli.setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true));
    exitCode = cli.execute(args);
    return cli.getExecutionResult();
  }

  @Test
  void noArgumentsGiveTheDefaults() {
    BenchConfig config = parse();

    assertThat(exitCode).isZero();
    assertThat(config.workloads()).containsExactly("W1", "W5");
    assertThat(config.reps()).isEqualTo(3);
    assertThat(config.batches()).isEqualTo(10_000);
    assertThat(config.cap()).isEqualTo(50);
    assertThat(config.warmupBatches()).isEqualTo(500);
    assertThat(config.w1Backfill()).isEqualTo("bench.noop");
    assertThat(config.barePerExecution()).isEqualTo(1000);
    assertThat(config.stopBatches()).isEqualTo(5000);
    assertThat(config.stopSleepMs()).isEqualTo(200);
    assertThat(config.stopAfterMs()).isEqualTo(3000);
    assertThat(config.temporalAddress()).isEqualTo("127.0.0.1:7253");
    assertThat(config.dbUrl())
        .isEqualTo("jdbc:postgresql://127.0.0.1:5432/dripline_bench?sslmode=disable");
    assertThat(config.dbUser()).isEqualTo("dripline");
    assertThat(config.dbPassword()).isEqualTo("dripline");
    assertThat(config.httpPort()).isEqualTo(18080);
    assertThat(config.workerSlots()).isEqualTo(64);
    assertThat(config.workflowTaskSlots()).isEqualTo(16);
    assertThat(config.dbPoolSize()).isEqualTo(150);
    assertThat(config.workerHeap()).isEqualTo("-Xmx512m");
    assertThat(config.driplineTaskQueue()).isEqualTo("dripline-bench");
    assertThat(config.bareTaskQueue()).isEqualTo("dripline-bench-bare");
    assertThat(config.logDir()).isEqualTo(Path.of(".dripline", "logs"));
    assertThat(config.workloadOptions()).isEmpty();
  }

  @Test
  void optionsOfEachKindAreRead() {
    BenchConfig config =
        parse(
            "--workloads", " w2, rc ,",
            "--reps", "7",
            "--temporal", "127.0.0.1:7777",
            "--worker-heap", "-Xmx1g",
            "--log-dir", "/tmp/bench-logs",
            "--w2-rows", "1_000",
            "--rc-chunk", "5");

    assertThat(config.workloads()).containsExactly("W2", "RC");
    assertThat(config.reps()).isEqualTo(7);
    assertThat(config.temporalAddress()).isEqualTo("127.0.0.1:7777");
    assertThat(config.workerHeap()).isEqualTo("-Xmx1g");
    assertThat(config.logDir()).isEqualTo(Path.of("/tmp/bench-logs"));
    assertThat(config.workloadOptions()).isEqualTo(Map.of("w2-rows", "1_000", "rc-chunk", "5"));
    assertThat(config.intOption("w2-rows", 1)).isEqualTo(1000);
    assertThat(config.intOption("w2-cap", 4)).isEqualTo(4);
    assertThat(config.option("w3-api", "own")).isEqualTo("own");
  }

  @Test
  void sizingAndClusterOptionsAreWorkloadOptions() {
    BenchConfig config =
        parse(
            "--workloads", "sizing,W4",
            "--cluster-temporal", "127.0.0.1:18933",
            "--cluster-db", "temporal_x",
            "--sizing-batches", "2_000");

    assertThat(config.workloads()).containsExactly("SIZING", "W4");
    assertThat(config.option("cluster-temporal", "")).isEqualTo("127.0.0.1:18933");
    assertThat(config.intOption("sizing-batches", 1)).isEqualTo(2000);
  }

  @Test
  void aLaterValueReplacesAnEarlierOne() {
    // bin/dripline-bench passes its own --temporal, --db-url, … before the caller's arguments.
    BenchConfig config =
        parse("--temporal", "a:1", "--w2-rows", "5", "--temporal", "b:2", "--w2-rows", "6");

    assertThat(config.temporalAddress()).isEqualTo("b:2");
    assertThat(config.workloadOptions()).isEqualTo(Map.of("w2-rows", "6"));
  }

  @Test
  void aValueThatIsNotANumberIsRejectedWithTheUsage() {
    assertThat(parse("--reps", "three")).isNull();

    assertThat(exitCode).isEqualTo(2);
    assertThat(err.toString()).contains("--reps", "three").contains("Usage: BenchMain");
  }

  @Test
  void tooSmallAValueIsRejected() {
    assertThat(parse("--cap", "0")).isNull();

    assertThat(exitCode).isEqualTo(2);
    assertThat(err.toString()).contains("--reps, --batches and --cap must be at least 1");
  }

  @Test
  void anUnknownWorkloadIsRejected() {
    assertThat(parse("--workloads", "W1,W9")).isNull();

    assertThat(exitCode).isEqualTo(2);
    assertThat(err.toString())
        .contains(
            "workload W9 is not implemented (implemented: [W1, W2, W3, W4, W5, W6, RC, UI, SIZING])");
  }

  @Test
  void anUnknownOptionOrAMissingValueIsRejected() {
    assertThat(parse("--w1-rows", "5")).isNull();
    assertThat(exitCode).isEqualTo(2);
    assertThat(err.toString()).contains("--w1-rows");

    assertThat(parse("--w2-rows")).isNull();
    assertThat(exitCode).isEqualTo(2);
    assertThat(err.toString()).contains("Missing required parameter for option '--w2-rows'");
  }

  @Test
  void helpListsEveryOptionWithItsDefault() {
    assertThat(parse("--help")).isNull();

    assertThat(exitCode).isZero();
    String help = out.toString();
    for (String option :
        List.of(
            "--workloads",
            "--reps",
            "--batches",
            "--cap",
            "--warmup-batches",
            "--w1-backfill",
            "--bare-per-execution",
            "--stop-batches",
            "--stop-sleep-ms",
            "--stop-after-ms",
            "--temporal",
            "--db-url",
            "--db-user",
            "--db-password",
            "--http-port",
            "--worker-slots",
            "--workflow-task-slots",
            "--db-pool",
            "--worker-heap",
            "--log-dir",
            "--w2-<name>",
            "--rc-<name>",
            "--ui-<name>",
            "--sizing-<name>",
            "--cluster-<name>")) {
      assertThat(help).contains(option);
    }
    assertThat(help).contains("Default: W1,W5", "Default: 10000", "Default: -Xmx512m");
  }
}

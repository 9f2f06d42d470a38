package dev.dripline.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Pins processes to CPUs with {@code taskset}, so a side-by-side run can model a database on a host
 * of its own: PostgreSQL (the postmaster, every child it has, and so every backend it forks later)
 * on the last CPU, the systems' JVMs and the Temporal dev server on the others. Every process
 * pinned is given all CPUs back by {@link #release()}.
 */
final class CpuPinning {
  private static final Path TASKSET = Path.of("/usr/bin/taskset");

  private final int cpus = Runtime.getRuntime().availableProcessors();
  private final List<Long> pinned = new ArrayList<>();
  private long postmaster = -1;

  /** Whether this machine has a CPU for the database and at least one for the rest. */
  boolean possible() {
    return cpus >= 2 && Files.isExecutable(TASKSET);
  }

  /** The CPU list of the database: the last CPU. */
  String databaseCpus() {
    return Integer.toString(cpus - 1);
  }

  /** The CPU list of everything else: all CPUs but the last. */
  String otherCpus() {
    return cpus == 2 ? "0" : "0-" + (cpus - 2);
  }

  /** Pins the postmaster and its children to {@link #databaseCpus()}. */
  void pinDatabase(long postmaster) throws IOException, InterruptedException {
    this.postmaster = postmaster;
    List<Long> pids = new ArrayList<>(List.of(postmaster));
    pids.addAll(children(postmaster));
    for (long pid : pids) {
      pin(pid, databaseCpus());
    }
  }

  /** Pins each process (all its threads) to {@link #otherCpus()}. */
  void pinOthers(List<Long> pids) throws IOException, InterruptedException {
    for (long pid : pids) {
      pin(pid, otherCpus());
    }
  }

  /**
   * Gives every pinned process still alive, and the postmaster's children (backends forked since
   * inherited its CPU), all CPUs back.
   */
  synchronized void release() {
    List<Long> pids = new ArrayList<>(pinned);
    if (postmaster > 0) {
      pids.addAll(children(postmaster));
    }
    for (long pid : pids) {
      try {
        taskset(pid, "0-" + (cpus - 1));
      } catch (IOException | RuntimeException e) {
        // Gone meanwhile.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    pinned.clear();
  }

  private synchronized void pin(long pid, String cpuList) throws IOException, InterruptedException {
    if (pinned.isEmpty() && postmaster > 0) {
      // A bench stopped by its timeout (SIGTERM) must not leave the database on one CPU.
      Runtime.getRuntime().addShutdownHook(new Thread(this::release, "w2-cpu-release"));
    }
    if (taskset(pid, cpuList)) {
      pinned.add(pid);
    }
  }

  /** {@code taskset -a -p -c cpuList pid}; whether it succeeded (false: the process is gone). */
  private static boolean taskset(long pid, String cpuList)
      throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder(TASKSET.toString(), "-a", "-p", "-c", cpuList, Long.toString(pid))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException("taskset did not finish for pid " + pid);
    }
    return process.exitValue() == 0;
  }

  private static List<Long> children(long parent) {
    List<Long> children = new ArrayList<>();
    ProcessHandle.of(parent).ifPresent(p -> p.children().forEach(c -> children.add(c.pid())));
    return children;
  }
}

package dev.dripline.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * CPU seconds used by the processes a workload runs on (Linux {@code /proc/<pid>/stat}: user +
 * system time, clock ticks of 1/100 s), so a side-by-side run shows where each system spends the
 * machine's two cores, not only how long it took. Each part names a supplier of pids, asked at
 * every reading, so processes started later (PostgreSQL backends of a growing pool) are included. A
 * process that ended between two readings drops out of the later one; the parts are meant for
 * long-lived processes (JVMs, the dev server, pooled backends).
 */
final class CpuMeter {
  private static final double TICKS_PER_SECOND = 100.0;

  private final Map<String, Supplier<List<Long>>> parts = new LinkedHashMap<>();

  /** Adds a named part: the pids whose CPU time is summed under that name. */
  CpuMeter part(String name, Supplier<List<Long>> pids) {
    parts.put(name, pids);
    return this;
  }

  /** CPU seconds per part, and per pid, right now. */
  Reading read() {
    Map<String, Map<Long, Double>> byPart = new LinkedHashMap<>();
    parts.forEach(
        (name, pids) -> {
          Map<Long, Double> seconds = new LinkedHashMap<>();
          for (long pid : pids.get()) {
            double s = cpuSeconds(pid);
            if (s >= 0) {
              seconds.put(pid, s);
            }
          }
          byPart.put(name, seconds);
        });
    return new Reading(byPart);
  }

  /** A reading; {@link #since} gives the CPU seconds used per part between two readings. */
  record Reading(Map<String, Map<Long, Double>> byPart) {
    /** Per part: CPU seconds used since {@code earlier}, over pids present in both readings. */
    Map<String, Double> since(Reading earlier) {
      Map<String, Double> used = new LinkedHashMap<>();
      byPart.forEach(
          (name, now) -> {
            Map<Long, Double> before = earlier.byPart().getOrDefault(name, Map.of());
            double sum = 0;
            for (Map.Entry<Long, Double> e : now.entrySet()) {
              sum += e.getValue() - before.getOrDefault(e.getKey(), 0.0);
            }
            used.put(name, sum);
          });
      return used;
    }
  }

  /** Pids of processes whose command line contains every one of {@code fragments}. */
  static List<Long> pidsWithCommandLine(String... fragments) {
    List<Long> pids = new ArrayList<>();
    ProcessHandle.allProcesses()
        .forEach(
            p -> {
              String line = commandLine(p.pid());
              for (String fragment : fragments) {
                if (!line.contains(fragment)) {
                  return;
                }
              }
              pids.add(p.pid());
            });
    return pids;
  }

  private static String commandLine(long pid) {
    try {
      return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")))
          .replace('\0', ' ');
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  /** utime + stime of {@code pid} in seconds, or -1 if it is gone or not readable. */
  static double cpuSeconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // Fields after the command name, which is in parentheses and may contain spaces.
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // fields[0] is field 3 (state); utime is field 14, stime field 15.
      long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
      return ticks / TICKS_PER_SECOND;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }
}

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

  /** Per part: CPU seconds by pid, read when asked. */
  private final Map<String, Supplier<Map<Long, Double>>> parts = new LinkedHashMap<>();

  /** Adds a named part: the pids whose CPU time is summed under that name. */
  CpuMeter part(String name, Supplier<List<Long>> pids) {
    parts.put(
        name,
        () -> {
          Map<Long, Double> seconds = new LinkedHashMap<>();
          for (long pid : pids.get()) {
            double s = cpuSeconds(pid);
            if (s >= 0) {
              seconds.put(pid, s);
            }
          }
          return seconds;
        });
    return this;
  }

  /**
   * Adds a named part for a process and its children, ended ones included: the root's own time,
   * what its children that ended used (the kernel adds it to the root's {@code cutime} and {@code
   * cstime} when the root reaps them), and its live children's time. For PostgreSQL's postmaster
   * that is every backend, those of a pool closed between two readings too. The root is asked at
   * every reading (-1: none).
   */
  CpuMeter tree(String name, Supplier<Long> root) {
    parts.put(
        name,
        () -> {
          long pid = root.get();
          double s = pid < 0 ? -1 : treeSeconds(pid);
          return s < 0 ? Map.of() : Map.of(pid, s);
        });
    return this;
  }

  /** CPU seconds per part, and per pid, right now. */
  Reading read() {
    Map<String, Map<Long, Double>> byPart = new LinkedHashMap<>();
    parts.forEach((name, seconds) -> byPart.put(name, seconds.get()));
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
    String[] fields = statFields(pid);
    // fields[0] is field 3 (state); utime is field 14, stime field 15.
    return fields == null ? -1 : ticks(fields, 11, 12) / TICKS_PER_SECOND;
  }

  /** The pid of {@code pid}'s parent, or -1 if it is gone or not readable. */
  static long parentPid(long pid) {
    String[] fields = statFields(pid);
    return fields == null ? -1 : Long.parseLong(fields[1]);
  }

  /** See {@link #tree}: -1 if the root is gone or not readable. */
  private static double treeSeconds(long root) {
    String[] fields = statFields(root);
    if (fields == null) {
      return -1;
    }
    // utime, stime, cutime, cstime: fields 14 to 17.
    long ticks = ticks(fields, 11, 12, 13, 14);
    try (var children = Files.list(Path.of("/proc"))) {
      for (Path dir : (Iterable<Path>) children::iterator) {
        String name = dir.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        String[] child = statFields(Long.parseLong(name));
        if (child != null && Long.parseLong(child[1]) == root) {
          ticks += ticks(child, 11, 12);
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return ticks / TICKS_PER_SECOND;
  }

  private static long ticks(String[] fields, int... indexes) {
    long sum = 0;
    for (int index : indexes) {
      sum += Long.parseLong(fields[index]);
    }
    return sum;
  }

  /** Fields 3 onwards of {@code /proc/<pid>/stat}, or null if it is gone or not readable. */
  private static String[] statFields(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // Fields after the command name, which is in parentheses and may contain spaces.
      return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}

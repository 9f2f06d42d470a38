package dev.dripline.bench;

import static java.nio.charset.StandardCharsets.UTF_8;

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

  /** {@code /proc/stat} columns of busy time: user, nice, system, irq, softirq. */
  static final int[] BUSY = {0, 1, 2, 5, 6};

  /** {@code /proc/stat}'s steal column. */
  static final int[] STEAL = {7};

  /** {@code /proc/stat}'s idle and iowait columns. */
  static final int[] IDLE = {3, 4};

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
   * Adds a named part: the threads of the processes {@code pids} whose name ({@code
   * /proc/<pid>/task/<tid>/comm}, at most 15 characters) starts with one of {@code prefixes} — for
   * a JVM's JIT compiler threads, {@code "C1 CompilerThre"} and {@code "C2 CompilerThre"}. Such a
   * part is a share of its process's part, not an addition to it.
   */
  CpuMeter threads(String name, Supplier<List<Long>> pids, String... prefixes) {
    parts.put(
        name,
        () -> {
          Map<Long, Double> seconds = new LinkedHashMap<>();
          for (long pid : pids.get()) {
            threadSeconds(pid)
                .forEach(
                    (tid, thread) -> {
                      for (String prefix : prefixes) {
                        if (thread.getKey().startsWith(prefix)) {
                          seconds.put(tid, thread.getValue());
                          break;
                        }
                      }
                    });
          }
          return seconds;
        });
    return this;
  }

  /**
   * CPU seconds of each thread of {@code pid} right now, by thread id, with the thread's name as
   * {@code /proc} shows it (15 characters at most); empty if the process is gone.
   */
  static Map<Long, Map.Entry<String, Double>> threadSeconds(long pid) {
    Map<Long, Map.Entry<String, Double>> threads = new LinkedHashMap<>();
    try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        String[] fields = fields(readOrEmpty(task.resolve("stat")));
        if (fields != null) {
          String name = readOrEmpty(task.resolve("comm")).strip();
          threads.put(
              Long.parseLong(task.getFileName().toString()),
              Map.entry(name, ticks(fields, 11, 12) / TICKS_PER_SECOND));
        }
      }
    } catch (IOException | RuntimeException e) {
      // The process ended.
    }
    return threads;
  }

  /**
   * CPU seconds used between two {@link #threadSeconds} readings, summed by thread name with its
   * digits dropped (a pool's threads share one name), most first; a thread that started in between
   * counts from zero.
   */
  static List<Map.Entry<String, Double>> byThreadName(
      Map<Long, Map.Entry<String, Double>> before, Map<Long, Map.Entry<String, Double>> after) {
    Map<String, Double> used = new LinkedHashMap<>();
    after.forEach(
        (tid, now) -> {
          Map.Entry<String, Double> earlier = before.get(tid);
          double delta = now.getValue() - (earlier == null ? 0 : earlier.getValue());
          if (delta > 0) {
            used.merge(now.getKey().replaceAll("[0-9]+", "#"), delta, Double::sum);
          }
        });
    List<Map.Entry<String, Double>> sorted = new ArrayList<>(used.entrySet());
    sorted.sort(Map.Entry.<String, Double>comparingByValue().reversed());
    return sorted;
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

  /**
   * Adds a named part for the whole machine: the sum of the {@code /proc/stat} "cpu" line's {@code
   * columns} (0 user, 1 nice, 2 system, 3 idle, 4 iowait, 5 irq, 6 softirq, 7 steal), in seconds
   * over all CPUs. {@link #BUSY} is every process's and the kernel's time, so the busy part less
   * the other parts is what the processes nobody measures used; {@link #STEAL} is the time the
   * hypervisor ran something else while this machine's CPUs wanted to run.
   */
  CpuMeter machine(String name, int... columns) {
    parts.put(name, () -> Map.of(0L, machineSeconds(columns)));
    return this;
  }

  private static double machineSeconds(int... columns) {
    String line = readOrEmpty(Path.of("/proc/stat")).lines().findFirst().orElse("");
    if (!line.startsWith("cpu ")) {
      return 0;
    }
    String[] fields = line.substring(4).strip().split("\\s+");
    long ticks = 0;
    for (int column : columns) {
      ticks += column < fields.length ? Long.parseLong(fields[column]) : 0;
    }
    return ticks / TICKS_PER_SECOND;
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
      return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")), UTF_8)
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

  /**
   * See {@link #tree}: -1 if the root is gone or not readable. A child that the root reaps while
   * its children are listed would be in neither the root's {@code cutime} read before nor the list
   * (a pool closed just before the reading loses seconds so): the root is read again after the
   * list, and the reading repeated until nothing was reaped in between.
   */
  private static double treeSeconds(long root) {
    for (int attempt = 0; ; attempt++) {
      String[] fields = statFields(root);
      if (fields == null) {
        return -1;
      }
      // utime, stime, cutime, cstime: fields 14 to 17.
      long ticks = ticks(fields, 11, 12, 13, 14);
      long reaped = ticks(fields, 13, 14);
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
      String[] after = statFields(root);
      if (after == null) {
        return -1;
      }
      if (ticks(after, 13, 14) == reaped || attempt >= 20) {
        return ticks / TICKS_PER_SECOND;
      }
    }
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
    return fields(readOrEmpty(Path.of("/proc", Long.toString(pid), "stat")));
  }

  /** Fields 3 onwards of a {@code stat} file's text, or null if there is none. */
  private static String[] fields(String stat) {
    int end = stat.lastIndexOf(')');
    // Fields after the command name, which is in parentheses and may contain spaces.
    return end < 0 || end + 2 > stat.length() ? null : stat.substring(end + 2).split(" ");
  }

  private static String readOrEmpty(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }
}

package dev.dripline.bench;

import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * Heap of another JVM after a full GC, over JMX: attaches to the process once ({@code
 * com.sun.tools.attach}, which starts its local management agent), then per sample calls {@code
 * MemoryMXBean.gc()} — {@code System.gc()}, a full stop-the-world collection under G1 unless the
 * JVM runs with {@code -XX:+ExplicitGCInvokesConcurrent} — and reads the heap's used and committed
 * bytes right after it, so "used" is the live heap plus what was allocated since that collection
 * ended. Also metaspace used, live threads, and the process's RSS from {@code /proc}.
 */
final class W3Heap implements AutoCloseable {
  private final long pid;
  private final JMXConnector connector;
  private final MemoryMXBean memory;
  private final ThreadMXBean threads;
  private final List<MemoryPoolMXBean> pools;

  private W3Heap(long pid, JMXConnector connector, MBeanServerConnection server)
      throws IOException {
    this.pid = pid;
    this.connector = connector;
    this.memory =
        ManagementFactory.newPlatformMXBeanProxy(
            server, ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class);
    this.threads =
        ManagementFactory.newPlatformMXBeanProxy(
            server, ManagementFactory.THREAD_MXBEAN_NAME, ThreadMXBean.class);
    this.pools =
        ManagementFactory.getPlatformMXBeans(server, MemoryPoolMXBean.class).stream().toList();
  }

  /** Attaches to the JVM {@code pid} (same user) and connects to its platform MBeans. */
  @SuppressWarnings("BanJNDI") // the JMX address is the benchmark's own local JVM agent
  static W3Heap attach(long pid) throws Exception {
    VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
    String address;
    try {
      address = vm.startLocalManagementAgent();
    } finally {
      vm.detach();
    }
    JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
    return new W3Heap(pid, connector, connector.getMBeanServerConnection());
  }

  /**
   * One reading.
   *
   * @param usedMb heap used right after the forced full GC, MiB
   * @param committedMb heap committed, MiB
   * @param metaspaceMb metaspace used, MiB (NaN when the JVM has none)
   * @param rssMb resident set size of the process, MiB (NaN when unknown)
   * @param threads live threads of the JVM
   * @param gcMillis how long the forced GC call took
   */
  record Sample(
      double usedMb,
      double committedMb,
      double metaspaceMb,
      double rssMb,
      int threads,
      double gcMillis) {}

  /** Forces a full GC and reads the heap right after it. */
  Sample sample() throws IOException {
    long start = System.nanoTime();
    memory.gc();
    double gcMillis = (System.nanoTime() - start) / 1e6;
    var heap = memory.getHeapMemoryUsage();
    double metaspace = Double.NaN;
    for (MemoryPoolMXBean pool : pools) {
      if (pool.getType() == MemoryType.NON_HEAP && "Metaspace".equals(pool.getName())) {
        metaspace = pool.getUsage().getUsed() / 1048576.0;
      }
    }
    return new Sample(
        heap.getUsed() / 1048576.0,
        heap.getCommitted() / 1048576.0,
        metaspace,
        rssMb(),
        threads.getThreadCount(),
        gcMillis);
  }

  /** The garbage collectors of the JVM, e.g. "G1 Young Generation, G1 Old Generation". */
  String collectors() throws Exception {
    MBeanServerConnection server = connector.getMBeanServerConnection();
    return String.join(
        ", ",
        server
            .queryNames(
                new ObjectName(ManagementFactory.GARBAGE_COLLECTOR_MXBEAN_DOMAIN_TYPE + ",*"), null)
            .stream()
            .map(name -> name.getKeyProperty("name"))
            .sorted()
            .toList());
  }

  private double rssMb() throws IOException {
    Path status = Path.of("/proc", Long.toString(pid), "status");
    if (Files.isReadable(status)) {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
        }
      }
    }
    return Double.NaN;
  }

  @Override
  public void close() {
    try {
      connector.close();
    } catch (IOException e) {
      // the JVM is gone
    }
  }
}

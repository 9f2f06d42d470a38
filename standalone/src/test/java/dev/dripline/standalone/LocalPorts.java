package dev.dripline.standalone;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * TCP ports on 127.0.0.1 for the servers a test starts as child processes.
 *
 * <p>Asking the kernel for port 0 hands out a port from its ephemeral range — the range it also
 * draws from for the local end of every outgoing connection and for the ports a Temporal dev server
 * picks for its own internal services. Between the probe socket closing and the child binding the
 * port, any of those may take it: CI once saw a dev server die at start-up with "bind: address
 * already in use". So ports are drawn at random from below the ephemeral range (read from {@code
 * /proc/sys/net/ipv4/ip_local_port_range}), where the kernel never hands one out by itself, and are
 * checked bindable. That also keeps a port free across a child's restart (F2 restarts its dev
 * server on the same port). A port is handed out at most once per JVM, so two servers started by
 * one test never share one.
 */
public final class LocalPorts {
  /** Below this live the fixed ports of the local stack (5432, 5439, 7233, 7243, 8233, ...). */
  private static final int LOWEST = 10_000;

  /**
   * Never handed out: the Temporal clusters of bin/dripline-test live here (frontend on {@code
   * DRIPLINE_TEST_GRPC_PORT} + 11000 and the 7 ports after it), and a service killed by {@code
   * ClusterFaultsIT} must find its ports free again when it restarts.
   */
  static final int CLUSTERS_FROM = 18_000;

  static final int CLUSTERS_TO = 18_999;

  private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  private LocalPorts() {}

  /** A port on 127.0.0.1 that is free now and that the kernel will not hand out by itself. */
  public static synchronized int free() {
    int below = ephemeralRangeStart();
    if (below - LOWEST < 1_000) {
      return kernelChosen();
    }
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(LOWEST, below);
      boolean reserved = port >= CLUSTERS_FROM && port <= CLUSTERS_TO;
      if (!reserved && !HANDED_OUT.contains(port) && bindable(port)) {
        HANDED_OUT.add(port);
        return port;
      }
    }
    throw new IllegalStateException(
        "no free port on 127.0.0.1 between " + LOWEST + " and " + below + " after 200 tries");
  }

  /**
   * The first port of the kernel's ephemeral range. Read through a stream: on JDK 17 {@code
   * Files.readString} and {@code Files.readAllBytes} return only "3" of this {@code /proc/sys}
   * file's "32768 60999" (checked by {@code LocalPortsTest}).
   */
  static int ephemeralRangeStart() {
    try {
      String[] range = Files.readAllLines(EPHEMERAL_RANGE).get(0).trim().split("\\s+");
      return Integer.parseInt(range[0]);
    } catch (IOException | RuntimeException e) {
      return 32_768; // Linux's default
    }
  }

  private static boolean bindable(int port) {
    try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return socket.isBound();
    } catch (IOException e) {
      return false;
    }
  }

  private static int kernelChosen() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException("no free port on 127.0.0.1", e);
    }
  }
}

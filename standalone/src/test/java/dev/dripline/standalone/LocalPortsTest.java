package dev.dripline.standalone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LocalPortsTest {
  private static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

  @Test
  void readsTheEphemeralRangeAsTheKernelReportsIt() throws IOException {
    assumeTrue(Files.exists(RANGE), "no " + RANGE + " on this system");
    String reported;
    try (InputStream in = Files.newInputStream(RANGE)) {
      reported = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim().split("\\s+")[0];
    }
    assertThat(LocalPorts.ephemeralRangeStart()).isEqualTo(Integer.parseInt(reported));
  }

  @Test
  void handsOutDistinctBindablePortsBelowTheEphemeralRange() throws IOException {
    int ephemeral = LocalPorts.ephemeralRangeStart();
    assumeTrue(ephemeral >= 11_000, "ephemeral range starts at " + ephemeral);
    Set<Integer> ports = new HashSet<>();
    for (int i = 0; i < 500; i++) {
      int port = LocalPorts.free();
      assertThat(port).isBetween(10_000, ephemeral - 1);
      assertThat(port >= LocalPorts.CLUSTERS_FROM && port <= LocalPorts.CLUSTERS_TO)
          .as("port %d is one of the suites' Temporal clusters'", port)
          .isFalse();
      assertThat(ports.add(port)).as("port %d handed out twice", port).isTrue();
    }
    int port = LocalPorts.free();
    try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      assertThat(socket.getLocalPort()).isEqualTo(port);
    }
  }
}

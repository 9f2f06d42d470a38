package dev.dripline.standalone.faults;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A lean HTTP/1.1 GET client for {@link ReadLoadIT}'s open-loop generator: a fixed number of
 * keep-alive connections, each served by a thread of its own with blocking I/O. The generator runs
 * on the same two cores as the system it measures, so its own CPU matters: {@code
 * java.net.http.HttpClient} used a third of a core at 150 requests/s here, which the app and
 * PostgreSQL then lacked.
 *
 * <p>A request is sent only if a connection is free ({@link #trySend}), so at most {@code
 * connections} requests are in flight. A reused connection that the server closed while idle is
 * replaced and the request sent again once; any other I/O failure, or no answer within the timeout,
 * is reported to the listener as a failure.
 */
final class LoadClient implements AutoCloseable {
  /** Told of each request's end: its status and body, or the failure. */
  interface Listener {
    void answered(int status, byte[] body, IOException failure);
  }

  private record Job(String path, Listener listener) {}

  private record Response(int status, byte[] body, boolean close) {}

  /** A connection with its buffered streams, kept for the next request. */
  private record Connection(Socket socket, InputStream in, OutputStream out) {}

  private final InetSocketAddress address;
  private final String head;
  private final int connections;
  private final int timeoutMillis;
  private final Semaphore free;
  private final BlockingQueue<Job> jobs = new LinkedBlockingQueue<>();
  private final List<Thread> threads = new ArrayList<>();

  LoadClient(URI base, String bearerToken, int connections, Duration timeout) {
    this.address = new InetSocketAddress(base.getHost(), base.getPort());
    this.head =
        " HTTP/1.1\r\nHost: "
            + base.getHost()
            + ":"
            + base.getPort()
            + "\r\nAuthorization: Bearer "
            + bearerToken
            + "\r\nAccept: application/json\r\n\r\n";
    this.connections = connections;
    this.timeoutMillis = (int) timeout.toMillis();
    this.free = new Semaphore(connections);
    for (int i = 0; i < connections; i++) {
      Thread thread = new Thread(this::serve, "load-client-" + i);
      thread.setDaemon(true);
      thread.start();
      threads.add(thread);
    }
  }

  /** Sends {@code GET path} if a connection is free; false (nothing sent) if all are busy. */
  boolean trySend(String path, Listener listener) {
    if (!free.tryAcquire()) {
      return false;
    }
    jobs.add(new Job(path, listener));
    return true;
  }

  /** Requests sent and not yet answered. */
  int inFlight() {
    return connections - free.availablePermits();
  }

  /** Waits until every request sent has been answered; false if that took longer than given. */
  boolean drain(Duration atMost) throws InterruptedException {
    if (!free.tryAcquire(connections, atMost.toMillis(), TimeUnit.MILLISECONDS)) {
      return false;
    }
    free.release(connections);
    return true;
  }

  @Override
  public void close() {
    threads.forEach(Thread::interrupt);
  }

  private void serve() {
    Connection socket = null;
    try {
      while (true) {
        Job job = jobs.take();
        Response response = null;
        IOException failure = null;
        try {
          boolean reused = socket != null;
          try {
            socket = socket == null ? connect() : socket;
            response = exchange(socket, job.path());
          } catch (EOFException stale) {
            // An idle keep-alive connection the server had closed: once more, on a new one.
            closeQuietly(socket);
            socket = null;
            if (!reused) {
              throw stale;
            }
            socket = connect();
            response = exchange(socket, job.path());
          }
          if (response.close()) {
            closeQuietly(socket);
            socket = null;
          }
        } catch (IOException e) {
          closeQuietly(socket);
          socket = null;
          failure = e;
        }
        try {
          if (failure != null) {
            job.listener().answered(-1, null, failure);
          } else {
            job.listener().answered(response.status(), response.body(), null);
          }
        } finally {
          free.release();
        }
      }
    } catch (InterruptedException e) {
      closeQuietly(socket);
    }
  }

  private Connection connect() throws IOException {
    Socket socket = new Socket();
    try {
      socket.setTcpNoDelay(true);
      socket.connect(address, 5_000);
      socket.setSoTimeout(timeoutMillis);
      return new Connection(
          socket,
          new BufferedInputStream(socket.getInputStream(), 16_384),
          new BufferedOutputStream(socket.getOutputStream(), 1_024));
    } catch (IOException e) {
      socket.close();
      throw e;
    }
  }

  private Response exchange(Connection connection, String path) throws IOException {
    connection.out().write(("GET " + path + head).getBytes(StandardCharsets.US_ASCII));
    connection.out().flush();
    return read(connection.in());
  }

  /** Reads one answer: status line, headers, and a body by length, in chunks, or up to EOF. */
  private static Response read(InputStream in) throws IOException {
    String statusLine = line(in);
    if (statusLine == null) {
      throw new EOFException("connection closed before the answer");
    }
    if (!statusLine.startsWith("HTTP/1.") || statusLine.length() < 12) {
      throw new IOException("not an HTTP/1.x status line: " + statusLine);
    }
    int status = Integer.parseInt(statusLine.substring(9, 12));
    boolean close = statusLine.startsWith("HTTP/1.0");
    long length = -1;
    boolean chunked = false;
    for (String header = line(in); header != null && !header.isEmpty(); header = line(in)) {
      int colon = header.indexOf(':');
      if (colon < 0) {
        continue;
      }
      String name = header.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String value = header.substring(colon + 1).trim().toLowerCase(Locale.ROOT);
      switch (name) {
        case "content-length" -> length = Long.parseLong(value);
        case "transfer-encoding" -> chunked = value.contains("chunked");
        case "connection" -> close = value.equals("close");
        default -> {}
      }
    }
    byte[] body;
    if (chunked) {
      ByteArrayOutputStream chunks = new ByteArrayOutputStream();
      while (true) {
        String size = line(in);
        if (size == null) {
          throw new EOFException("connection closed within a chunked body");
        }
        int n = Integer.parseInt(size.split(";", 2)[0].trim(), 16);
        if (n == 0) {
          for (String trailer = line(in); trailer != null && !trailer.isEmpty(); ) {
            trailer = line(in);
          }
          break;
        }
        chunks.write(exactly(in, n));
        line(in);
      }
      body = chunks.toByteArray();
    } else if (length >= 0) {
      body = exactly(in, (int) length);
    } else {
      body = in.readAllBytes();
      close = true;
    }
    return new Response(status, body, close);
  }

  private static byte[] exactly(InputStream in, int n) throws IOException {
    byte[] bytes = in.readNBytes(n);
    if (bytes.length < n) {
      throw new EOFException("connection closed after " + bytes.length + " of " + n + " bytes");
    }
    return bytes;
  }

  /** A line without its CR LF; null at end of stream before any byte. */
  private static String line(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int b;
    while ((b = in.read()) != -1) {
      if (b == '\n') {
        int end = line.length();
        return end > 0 && line.charAt(end - 1) == '\r'
            ? line.substring(0, end - 1)
            : line.toString();
      }
      line.append((char) b);
    }
    return line.length() == 0 ? null : line.toString();
  }

  private static void closeQuietly(Connection connection) {
    if (connection != null) {
      try {
        connection.socket().close();
      } catch (IOException e) {
        // closing anyway
      }
    }
  }
}

package dev.dripline.activities.webhooks;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * One HTTP/1.1 POST to an address resolved and checked beforehand ({@code WebhookAddresses}), so no
 * second resolution of the URL's host can lead elsewhere. The request carries the URL's host as its
 * {@code Host} header, and over https the TLS handshake sends it as the server name (SNI) and
 * verifies the server's certificate against it, as a client that resolved the name itself would.
 * Only the status line of the answer is read; the connection is closed after it.
 */
final class WebhookPost {
  /** The longest status or header line read. */
  private static final int MAX_LINE = 8192;

  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

  private final SSLSocketFactory tls;
  private final Duration timeout;

  WebhookPost(SSLSocketFactory tls, Duration timeout) {
    this.tls = tls;
    this.timeout = timeout;
  }

  /**
   * Posts {@code body} with {@code headers} to {@code url}'s path on the first of {@code addresses}
   * that accepts a connection; the answer's status code.
   *
   * @throws IOException when no address accepts, or the exchange fails or times out
   */
  int send(URI url, List<InetAddress> addresses, Map<String, String> headers, byte[] body)
      throws IOException {
    boolean https = url.getScheme().toLowerCase(Locale.ROOT).equals("https");
    int port = url.getPort() != -1 ? url.getPort() : https ? 443 : 80;
    IOException failed = null;
    for (InetAddress address : addresses) {
      Socket socket = new Socket();
      try {
        socket.connect(new InetSocketAddress(address, port), timeoutMillis());
      } catch (IOException e) {
        socket.close();
        if (failed != null) {
          e.addSuppressed(failed);
        }
        failed = e;
        continue;
      }
      try (Socket connection = https ? handshake(socket, url, port) : socket) {
        connection.setSoTimeout(timeoutMillis());
        write(connection.getOutputStream(), url, port, https, headers, body);
        return status(new BufferedInputStream(connection.getInputStream()));
      } finally {
        socket.close();
      }
    }
    throw failed != null ? failed : new IOException("no address to connect to");
  }

  private int timeoutMillis() {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
  }

  private Socket handshake(Socket socket, URI url, int port) throws IOException {
    String host = url.getHost();
    SSLSocket ssl = (SSLSocket) tls.createSocket(socket, bare(host), port, true);
    SSLParameters parameters = ssl.getSSLParameters();
    parameters.setEndpointIdentificationAlgorithm("HTTPS");
    if (!host.startsWith("[") && !IPV4.matcher(host).matches()) {
      // A name, not an address literal: SNI carries names only.
      parameters.setServerNames(List.of(new SNIHostName(host)));
    }
    ssl.setSSLParameters(parameters);
    ssl.setSoTimeout(timeoutMillis());
    ssl.startHandshake();
    return ssl;
  }

  private static String bare(String host) {
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  private static void write(
      OutputStream out, URI url, int port, boolean https, Map<String, String> headers, byte[] body)
      throws IOException {
    String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
    if (url.getRawQuery() != null) {
      path += "?" + url.getRawQuery();
    }
    boolean defaultPort = url.getPort() == -1 || port == (https ? 443 : 80);
    StringBuilder head =
        new StringBuilder("POST ")
            .append(path)
            .append(" HTTP/1.1\r\nHost: ")
            .append(url.getHost())
            .append(defaultPort ? "" : ":" + port)
            .append("\r\n");
    headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
    head.append("content-length: ").append(body.length).append("\r\nconnection: close\r\n\r\n");
    out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
    out.write(body);
    out.flush();
  }

  /** The status code of the final answer, past any interim (1xx) one. */
  private static int status(InputStream in) throws IOException {
    while (true) {
      String line = line(in);
      String[] parts = line.split(" ", 3);
      int code;
      try {
        code = parts.length >= 2 && parts[0].startsWith("HTTP/") ? Integer.parseInt(parts[1]) : -1;
      } catch (NumberFormatException e) {
        code = -1;
      }
      if (code < 100 || code > 999) {
        throw new IOException("not an HTTP answer: " + abbreviated(line));
      }
      if (code >= 200) {
        return code;
      }
      while (!line(in).isEmpty()) {
        // an interim answer's headers
      }
    }
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != -1 && c != '\n') {
      if (line.size() >= MAX_LINE) {
        throw new IOException("an answer's line is longer than " + MAX_LINE + " bytes");
      }
      line.write(c);
    }
    if (c == -1 && line.size() == 0) {
      throw new IOException("the connection closed before an answer");
    }
    String text = line.toString(StandardCharsets.ISO_8859_1);
    return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
  }

  private static String abbreviated(String text) {
    return text.length() <= 100 ? text : text.substring(0, 100) + "…";
  }
}

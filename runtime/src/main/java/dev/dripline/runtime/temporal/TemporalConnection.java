package dev.dripline.runtime.temporal;

import dev.dripline.runtime.config.TemporalConfig;
import io.grpc.Metadata;
import io.temporal.authorization.AuthorizationTokenSupplier;
import io.temporal.serviceclient.SimpleSslContextBuilder;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import java.util.Locale;
import javax.net.ssl.TrustManagerFactory;

/**
 * How the Temporal client reaches the frontend (spec §12 D2): TLS with the server's CA and name,
 * mTLS with a client certificate and key, an API key (Temporal Cloud), all from {@link
 * TemporalConfig}. Certificate files are read once, when the client is built; an API key file is
 * reread when it changes. A setting that cannot be used fails the start with an {@link
 * IllegalStateException} that names the variable and the file, never a file's content or the key.
 */
public final class TemporalConnection {
  // The variable of each setting, for error messages.
  static final String TLS = "TEMPORAL_TLS";
  static final String CERT = "TEMPORAL_TLS_CLIENT_CERT_PATH";
  static final String KEY = "TEMPORAL_TLS_CLIENT_KEY_PATH";
  static final String CA = "TEMPORAL_TLS_SERVER_CA_CERT_PATH";
  static final String API_KEY = "TEMPORAL_API_KEY";
  static final String API_KEY_FILE = "TEMPORAL_API_KEY_FILE";

  private static final Metadata.Key<String> NAMESPACE_HEADER =
      Metadata.Key.of("temporal-namespace", Metadata.ASCII_STRING_MARSHALLER);

  private TemporalConnection() {}

  /** Whether the connection uses TLS: as set, or, when unset, whenever anything asks for it. */
  static boolean tlsEnabled(TemporalConfig config) {
    String tls = blankToNull(config.tls());
    if (tls != null) {
      return switch (tls.toLowerCase(Locale.ROOT)) {
        case "true", "1", "yes" -> true;
        case "false", "0", "no" -> false;
        default -> throw new IllegalStateException(TLS + " must be true or false");
      };
    }
    return set(config.tlsClientCertPath())
        || set(config.tlsClientKeyPath())
        || set(config.tlsServerCaCertPath())
        || set(config.tlsServerName())
        || set(config.apiKey())
        || set(config.apiKeyFile());
  }

  /**
   * Adds TLS, the client certificate, the server's name and the API key that {@code config} asks
   * for to {@code builder}; nothing when it asks for none.
   *
   * @throws IllegalStateException when a setting cannot be used (a file missing or unreadable, a
   *     certificate without its key, TLS settings with {@code TEMPORAL_TLS=false})
   */
  public static WorkflowServiceStubsOptions.Builder secure(
      WorkflowServiceStubsOptions.Builder builder, TemporalConfig config) {
    boolean tls = tlsEnabled(config);
    String cert = blankToNull(config.tlsClientCertPath());
    String key = blankToNull(config.tlsClientKeyPath());
    String ca = blankToNull(config.tlsServerCaCertPath());
    String serverName = blankToNull(config.tlsServerName());
    if ((cert == null) != (key == null)) {
      throw new IllegalStateException(
          cert == null
              ? KEY + " is set but " + CERT + " is not"
              : CERT + " is set but " + KEY + " is not");
    }
    if (!tls && (cert != null || ca != null || serverName != null)) {
      throw new IllegalStateException(
          TLS + "=false, but TEMPORAL_TLS_* settings are given; remove them or turn TLS on");
    }
    if (tls) {
      builder.setSslContext(sslContext(cert, key, ca));
      if (serverName != null) {
        builder.setChannelInitializer(channel -> channel.overrideAuthority(serverName));
      }
    }
    AuthorizationTokenSupplier apiKey = apiKey(config);
    if (apiKey != null) {
      builder.addApiKey(apiKey);
      // Temporal Cloud's regional API-key endpoints route a call by this header.
      Metadata namespace = new Metadata();
      namespace.put(NAMESPACE_HEADER, config.namespace());
      builder.addGrpcMetadataProvider(() -> namespace);
    }
    return builder;
  }

  private static io.grpc.netty.shaded.io.netty.handler.ssl.SslContext sslContext(
      String cert, String key, String ca) {
    SimpleSslContextBuilder ssl;
    if (cert != null) {
      ssl =
          SimpleSslContextBuilder.forPKCS8(
              new ByteArrayInputStream(read(CERT, cert)), new ByteArrayInputStream(read(KEY, key)));
    } else {
      ssl = SimpleSslContextBuilder.noKeyOrCertChain();
    }
    if (ca != null) {
      ssl.setTrustManager(trustManagers(ca).getTrustManagers()[0]);
    }
    try {
      return ssl.build();
    } catch (javax.net.ssl.SSLException | RuntimeException e) {
      // Netty's messages name what is wrong (not PEM, key and certificate do not match), never
      // the key's bytes.
      throw new IllegalStateException(
          "cannot use the TLS settings for Temporal"
              + (cert == null ? "" : " (" + CERT + "=" + cert + ", " + KEY + "=" + key + ")")
              + ": the certificate must be PEM and the key PEM PKCS#8 (BEGIN PRIVATE KEY)"
              + " belonging to it: "
              + e.getMessage(),
          e);
    }
  }

  private static TrustManagerFactory trustManagers(String ca) {
    try (InputStream in = new ByteArrayInputStream(read(CA, ca))) {
      Collection<? extends Certificate> certificates =
          CertificateFactory.getInstance("X.509").generateCertificates(in);
      if (certificates.isEmpty()) {
        throw new IllegalStateException(CA + "=" + ca + " holds no PEM certificate");
      }
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate certificate : certificates) {
        store.setCertificateEntry("ca-" + i++, certificate);
      }
      TrustManagerFactory factory =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      factory.init(store);
      return factory;
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException(
          CA + "=" + ca + " is not a file of PEM certificates: " + e.getMessage(), e);
    }
  }

  /** The API key's supplier, or null when none is set. */
  static AuthorizationTokenSupplier apiKey(TemporalConfig config) {
    String value = blankToNull(config.apiKey());
    String file = blankToNull(config.apiKeyFile());
    if (value != null && file != null) {
      throw new IllegalStateException(API_KEY + " and " + API_KEY_FILE + " are both set; set one");
    }
    if (value != null) {
      String key = value.strip();
      return () -> key;
    }
    if (file != null) {
      return new FileApiKey(Path.of(file));
    }
    return null;
  }

  /** An API key read from a file (a mounted Secret), read again whenever the file changes. */
  static final class FileApiKey implements AuthorizationTokenSupplier {
    private final Path path;
    private FileTime readAt;
    private String key;

    FileApiKey(Path path) {
      this.path = path;
      supply();
    }

    @Override
    public synchronized String supply() {
      try {
        FileTime modified = Files.getLastModifiedTime(path);
        if (key == null || !modified.equals(readAt)) {
          String read = Files.readString(path, StandardCharsets.UTF_8).strip();
          if (read.isEmpty()) {
            throw new IllegalStateException(API_KEY_FILE + "=" + path + " is empty");
          }
          key = read;
          readAt = modified;
        }
      } catch (IOException e) {
        if (key == null) {
          throw new IllegalStateException(
              "cannot read " + API_KEY_FILE + "=" + path + ": " + e.getClass().getSimpleName(), e);
        }
        // Mid-rotation (the file briefly absent): the key read last goes on.
      }
      return key;
    }
  }

  /** The file's bytes, read now; a missing or unreadable file names the variable. */
  private static byte[] read(String variable, String file) {
    Path path = Path.of(file);
    if (!Files.isRegularFile(path)) {
      throw new IllegalStateException(variable + "=" + file + ": no such file");
    }
    try {
      return Files.readAllBytes(path);
    } catch (IOException e) {
      throw new IllegalStateException(
          variable + "=" + file + " cannot be read: " + e.getClass().getSimpleName(), e);
    }
  }

  private static boolean set(String value) {
    return blankToNull(value) != null;
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value.strip();
  }
}

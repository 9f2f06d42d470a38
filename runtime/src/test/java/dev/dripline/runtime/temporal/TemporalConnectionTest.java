package dev.dripline.runtime.temporal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.runtime.config.TemporalConfig;
import io.temporal.authorization.AuthorizationTokenSupplier;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TemporalConnectionTest {
  private static final String SECRET = "tcloud-key-3c7f1b9e";

  @TempDir Path dir;

  private static TemporalConfig config(
      String tls,
      String cert,
      String key,
      String ca,
      String serverName,
      String apiKey,
      String file) {
    return new TemporalConfig(
        "127.0.0.1:7233",
        "default",
        "dripline",
        Duration.ofSeconds(15),
        Duration.ofSeconds(10),
        tls,
        cert,
        key,
        ca,
        serverName,
        apiKey,
        file);
  }

  @Test
  void plainWhenNothingIsSet() {
    TemporalConfig plain = config(null, "", " ", null, null, "", null);
    assertThat(TemporalConnection.tlsEnabled(plain)).isFalse();
    WorkflowServiceStubsOptions options =
        TemporalConnection.secure(WorkflowServiceStubsOptions.newBuilder(), plain)
            .setTarget("127.0.0.1:7233")
            .build();
    assertThat(options.getSslContext()).isNull();
    assertThat(options.getGrpcMetadataProviders()).isNullOrEmpty();
  }

  @Test
  void anApiKeyTurnsTlsOnUnlessTurnedOff() {
    assertThat(TemporalConnection.tlsEnabled(config(null, null, null, null, null, SECRET, null)))
        .isTrue();
    assertThat(TemporalConnection.tlsEnabled(config("false", null, null, null, null, SECRET, null)))
        .isFalse();
    assertThat(TemporalConnection.tlsEnabled(config("true", null, null, null, null, null, null)))
        .isTrue();
    assertThatThrownBy(
            () ->
                TemporalConnection.tlsEnabled(config("maybe", null, null, null, null, null, null)))
        .hasMessageContaining("TEMPORAL_TLS must be true or false");
  }

  @Test
  void tlsWithTheJvmsCasAndAnApiKeyAsBearer() {
    WorkflowServiceStubsOptions options =
        TemporalConnection.secure(
                WorkflowServiceStubsOptions.newBuilder(),
                config(null, null, null, null, null, SECRET, null))
            .setTarget("127.0.0.1:7233")
            .build();
    assertThat(options.getSslContext()).isNotNull();
    String headers =
        options.getGrpcMetadataProviders().stream()
            .map(provider -> provider.getMetadata().toString())
            .reduce("", String::concat);
    assertThat(headers).contains("Bearer " + SECRET).contains("temporal-namespace=default");
  }

  @Test
  void theApiKeyFileIsReadAgainWhenItChanges() throws Exception {
    Path file = dir.resolve("api-key");
    Files.writeString(file, "first-key\n");
    AuthorizationTokenSupplier supplier =
        TemporalConnection.apiKey(config(null, null, null, null, null, null, file.toString()));
    assertThat(supplier.supply()).isEqualTo("first-key");
    Files.writeString(file, "second-key\n");
    Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(5)));
    assertThat(supplier.supply()).isEqualTo("second-key");
    // Mid-rotation the file may be absent for a moment: the last key goes on.
    Files.delete(file);
    assertThat(supplier.supply()).isEqualTo("second-key");
  }

  @Test
  void aMissingFileFailsTheStartNamingTheVariable() {
    String missing = dir.resolve("absent.pem").toString();
    assertThatThrownBy(
            () ->
                TemporalConnection.secure(
                    WorkflowServiceStubsOptions.newBuilder(),
                    config(null, null, null, missing, null, null, null)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + missing + ": no such file");
    assertThatThrownBy(
            () -> TemporalConnection.apiKey(config(null, null, null, null, null, null, missing)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("TEMPORAL_API_KEY_FILE=" + missing);
  }

  @Test
  void aCertificateNeedsItsKey() throws Exception {
    Path cert = Files.writeString(dir.resolve("client.pem"), "x");
    assertThatThrownBy(
            () ->
                TemporalConnection.secure(
                    WorkflowServiceStubsOptions.newBuilder(),
                    config(null, cert.toString(), null, null, null, null, null)))
        .hasMessage("TEMPORAL_TLS_CLIENT_CERT_PATH is set but TEMPORAL_TLS_CLIENT_KEY_PATH is not");
  }

  @Test
  void aFileThatIsNotPemIsRefusedWithoutItsContent() throws Exception {
    Path cert = Files.writeString(dir.resolve("client.pem"), "not a certificate " + SECRET);
    Path key = Files.writeString(dir.resolve("client.key"), "not a key " + SECRET);
    Path ca = Files.writeString(dir.resolve("ca.pem"), "not a CA " + SECRET);
    assertThatThrownBy(
            () ->
                TemporalConnection.secure(
                    WorkflowServiceStubsOptions.newBuilder(),
                    config(null, cert.toString(), key.toString(), null, null, null, null)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("TEMPORAL_TLS_CLIENT_KEY_PATH=" + key)
        .hasMessageNotContaining(SECRET);
    assertThatThrownBy(
            () ->
                TemporalConnection.secure(
                    WorkflowServiceStubsOptions.newBuilder(),
                    config(null, null, null, ca.toString(), null, null, null)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("TEMPORAL_TLS_SERVER_CA_CERT_PATH=" + ca)
        .hasMessageNotContaining(SECRET);
  }

  @Test
  void tlsSettingsWithTlsOffAreAMistake() {
    assertThatThrownBy(
            () ->
                TemporalConnection.secure(
                    WorkflowServiceStubsOptions.newBuilder(),
                    config("false", null, null, null, "temporal.example", null, null)))
        .hasMessageContaining("TEMPORAL_TLS=false");
  }

  @Test
  void bothApiKeySourcesAreAMistake() {
    assertThatThrownBy(
            () -> TemporalConnection.apiKey(config(null, null, null, null, null, SECRET, "/x")))
        .hasMessage("TEMPORAL_API_KEY and TEMPORAL_API_KEY_FILE are both set; set one")
        .hasMessageNotContaining(SECRET);
  }

  @Test
  void theConfigurationNeverShowsTheApiKey() {
    assertThat(config(null, null, null, null, null, SECRET, null).toString())
        .doesNotContain(SECRET)
        .contains("apiKey=(set)");
  }
}

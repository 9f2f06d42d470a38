package dev.dripline.runtime.config;

import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.core.bind.annotation.Bindable;

/**
 * Where Dripline finds Temporal (spec §6.2) and how it connects (spec §12 D2). The connection's
 * variables are the Temporal CLI's, so one environment serves both.
 *
 * @param address the frontend, {@code TEMPORAL_ADDRESS}
 * @param namespace the namespace, {@code TEMPORAL_NAMESPACE}
 * @param taskQueue the task queue of runs and batches, {@code DRIPLINE_TASK_QUEUE}
 * @param rpcRetryExpiration how long a failing call to Temporal is retried before it fails
 * @param updateTimeout how long the API waits for a run's workflow to answer a retry or a cap
 *     change (a Temporal Update) before it answers 503; an Update a worker sees only later is
 *     rejected unapplied, {@code DRIPLINE_UPDATE_TIMEOUT}
 * @param tls whether to use TLS, {@code TEMPORAL_TLS}; unset (or blank): on when any other TLS
 *     setting or an API key is given
 * @param tlsClientCertPath the client certificate (PEM) for mTLS, {@code
 *     TEMPORAL_TLS_CLIENT_CERT_PATH}
 * @param tlsClientKeyPath its private key (PEM, PKCS#8), {@code TEMPORAL_TLS_CLIENT_KEY_PATH}
 * @param tlsServerCaCertPath the CA certificates (PEM) the server's certificate must chain to,
 *     {@code TEMPORAL_TLS_SERVER_CA_CERT_PATH}; unset: the JVM's trusted CAs
 * @param tlsServerName the name the server's certificate must carry when it is not the address's
 *     host, {@code TEMPORAL_TLS_SERVER_NAME}
 * @param apiKey an API key sent as {@code Authorization: Bearer} (Temporal Cloud), {@code
 *     TEMPORAL_API_KEY}; never logged
 * @param apiKeyFile a file holding the API key, reread when it changes, {@code
 *     TEMPORAL_API_KEY_FILE}
 */
@ConfigurationProperties("dripline.temporal")
public record TemporalConfig(
    @Bindable(defaultValue = "localhost:7233") String address,
    @Bindable(defaultValue = "default") String namespace,
    @Bindable(defaultValue = "dripline") String taskQueue,
    @Bindable(defaultValue = "15s") java.time.Duration rpcRetryExpiration,
    @Bindable(defaultValue = "10s") java.time.Duration updateTimeout,
    @Nullable String tls,
    @Nullable String tlsClientCertPath,
    @Nullable String tlsClientKeyPath,
    @Nullable String tlsServerCaCertPath,
    @Nullable String tlsServerName,
    @Nullable String apiKey,
    @Nullable String apiKeyFile) {

  /** Never shows the API key. */
  @Override
  public String toString() {
    return "TemporalConfig[address="
        + address
        + ", namespace="
        + namespace
        + ", taskQueue="
        + taskQueue
        + ", tls="
        + tls
        + ", tlsClientCertPath="
        + tlsClientCertPath
        + ", tlsClientKeyPath="
        + tlsClientKeyPath
        + ", tlsServerCaCertPath="
        + tlsServerCaCertPath
        + ", tlsServerName="
        + tlsServerName
        + ", apiKey="
        + (apiKey == null || apiKey.isBlank() ? "(none)" : "(set)")
        + ", apiKeyFile="
        + apiKeyFile
        + "]";
  }
}

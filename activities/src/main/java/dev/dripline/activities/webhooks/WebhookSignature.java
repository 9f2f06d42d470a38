package dev.dripline.activities.webhooks;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The Standard Webhooks signature: {@code v1,<base64 HMAC-SHA256 of "id.timestamp.body">}, keyed by
 * the secret's bytes — the base64 after {@code whsec_} decoded.
 */
public final class WebhookSignature {
  /** The prefix of a secret in the Standard Webhooks form. */
  public static final String SECRET_PREFIX = "whsec_";

  private WebhookSignature() {}

  /**
   * The {@code webhook-signature} header's value of message {@code id} sent at {@code timestamp}
   * (unix seconds) with {@code body}.
   *
   * @throws IllegalArgumentException if {@code secret} is not {@code whsec_<base64>}
   */
  public static String sign(String secret, String id, long timestamp, byte[] body) {
    Mac mac;
    try {
      mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key(secret), "HmacSHA256"));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HMAC-SHA256 is not available", e);
    }
    mac.update((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8));
    mac.update(body);
    return "v1," + Base64.getEncoder().encodeToString(mac.doFinal());
  }

  /** The key bytes of {@code secret}, {@code whsec_<base64>}. */
  public static byte[] key(String secret) {
    if (secret == null || !secret.startsWith(SECRET_PREFIX)) {
      throw new IllegalArgumentException("a webhook secret starts with " + SECRET_PREFIX);
    }
    byte[] key = Base64.getDecoder().decode(secret.substring(SECRET_PREFIX.length()));
    if (key.length == 0) {
      throw new IllegalArgumentException("a webhook secret has at least one byte of key");
    }
    return key;
  }
}

package dev.dripline.app.ui;

import dev.dripline.app.auth.AuthConfig;
import dev.dripline.app.auth.Profile;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.cookie.Cookie;
import io.micronaut.http.cookie.SameSite;
import jakarta.inject.Singleton;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The dashboard's sign-in: a session is a cookie that the app signs, nothing kept in the process,
 * so any app process with the same tokens accepts it. The cookie names the credential, its expiry
 * and a random nonce, signed (HMAC-SHA256) with a key derived from that credential's token:
 * changing a token ends its sessions. A form token (CSRF) is derived from the nonce with the same
 * key, so every form of one session carries the same token, which no other site can read or
 * compute.
 *
 * <p>The cookie is HttpOnly (no script reads it), {@code SameSite=Lax} and, under the production
 * profile, Secure. Lax rather than Strict so that a link to a run from a chat or an alert opens
 * signed in: a top-level GET is the only cross-site request that carries it, and no GET changes
 * anything; every POST needs the form token besides.
 */
@Singleton
public class UiSessions {
  /** The session cookie's name. */
  public static final String COOKIE = "dripline_session";

  /** The sign-in form's own form token, set as a cookie before there is a session. */
  public static final String LOGIN_COOKIE = "dripline_login";

  private static final String VERSION = "v1";
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();

  private record Credential(String name, boolean operator, byte[] token, byte[] key) {}

  private final List<Credential> credentials;
  private final UiConfig config;
  private final boolean secure;
  private final SecureRandom random = new SecureRandom();
  private final Clock clock;

  public UiSessions(AuthConfig auth, Profile profile, UiConfig config) {
    this(auth, profile, config, Clock.systemUTC());
  }

  UiSessions(AuthConfig auth, Profile profile, UiConfig config, Clock clock) {
    this.config = config;
    this.clock = clock;
    this.secure = profile.production();
    List<Credential> accepted = new ArrayList<>();
    add(accepted, "operator", true, auth.operatorToken());
    add(accepted, "viewer", false, auth.viewerToken());
    this.credentials = List.copyOf(accepted);
  }

  private static void add(
      List<Credential> credentials, String name, boolean operator, @Nullable String token) {
    if (token != null && !token.isBlank()) {
      byte[] bytes = token.trim().getBytes(StandardCharsets.UTF_8);
      credentials.add(
          new Credential(
              name,
              operator,
              sha256(bytes),
              sha256(("ui-session:" + token).getBytes(StandardCharsets.UTF_8))));
    }
  }

  /**
   * The session cookie's value for a sign-in with {@code token}, if it is a configured token; every
   * credential is compared, whatever matched before.
   */
  public Optional<String> signIn(@Nullable String token) {
    if (token == null || token.isBlank()) {
      return Optional.empty();
    }
    byte[] digest = sha256(token.trim().getBytes(StandardCharsets.UTF_8));
    Credential found = null;
    for (Credential credential : credentials) {
      if (MessageDigest.isEqual(digest, credential.token()) && found == null) {
        found = credential;
      }
    }
    if (found == null) {
      return Optional.empty();
    }
    byte[] nonce = new byte[16];
    random.nextBytes(nonce);
    long expiry = clock.instant().plus(config.sessionLifetime()).getEpochSecond();
    String payload = VERSION + "." + found.name() + "." + expiry + "." + B64.encodeToString(nonce);
    return Optional.of(payload + "." + B64.encodeToString(hmac(found.key(), payload)));
  }

  /** The session a cookie value stands for, if it is signed by a credential and not expired. */
  public Optional<UiSession> session(@Nullable String cookie) {
    if (cookie == null) {
      return Optional.empty();
    }
    String[] parts = cookie.split("\\.", -1);
    if (parts.length != 5 || !VERSION.equals(parts[0])) {
      return Optional.empty();
    }
    Credential credential =
        credentials.stream().filter(c -> c.name().equals(parts[1])).findFirst().orElse(null);
    if (credential == null) {
      return Optional.empty();
    }
    String payload = String.join(".", parts[0], parts[1], parts[2], parts[3]);
    byte[] mac;
    long expiry;
    try {
      mac = B64D.decode(parts[4]);
      expiry = Long.parseLong(parts[2]);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    if (!MessageDigest.isEqual(mac, hmac(credential.key(), payload))
        || clock.instant().isAfter(Instant.ofEpochSecond(expiry))) {
      return Optional.empty();
    }
    String csrf = B64.encodeToString(hmac(credential.key(), "csrf." + parts[3]));
    return Optional.of(new UiSession(credential.name(), credential.operator(), csrf));
  }

  /** Whether {@code presented} is the form token {@code expected}, compared in constant time. */
  public static boolean sameToken(@Nullable String presented, @Nullable String expected) {
    if (presented == null || expected == null || presented.isEmpty()) {
      return false;
    }
    return MessageDigest.isEqual(
        presented.getBytes(StandardCharsets.UTF_8), expected.getBytes(StandardCharsets.UTF_8));
  }

  /** A fresh random form token for the sign-in form. */
  public String loginToken() {
    byte[] bytes = new byte[24];
    random.nextBytes(bytes);
    return B64.encodeToString(bytes);
  }

  /** The session cookie carrying {@code value}. */
  public Cookie sessionCookie(String value) {
    return cookie(COOKIE, value).maxAge(config.sessionLifetime());
  }

  /** The sign-in form's token cookie. */
  public Cookie loginCookie(String value) {
    return cookie(LOGIN_COOKIE, value).maxAge(config.sessionLifetime());
  }

  /** A cookie that removes cookie {@code name} from the browser. */
  public Cookie cleared(String name) {
    return cookie(name, "").maxAge(0);
  }

  private Cookie cookie(String name, String value) {
    return Cookie.of(name, value).path("/ui").httpOnly(true).secure(secure).sameSite(SameSite.Lax);
  }

  private static byte[] hmac(byte[] key, String text) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("every Java runtime has HmacSHA256", e);
    }
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
  }
}

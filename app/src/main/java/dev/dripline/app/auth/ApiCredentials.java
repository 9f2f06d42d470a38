package dev.dripline.app.auth;

import io.micronaut.core.annotation.Nullable;
import jakarta.inject.Singleton;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The API's bearer credentials, kept only as SHA-256 digests. A presented token is digested and
 * compared with every credential's digest by {@link MessageDigest#isEqual}, without stopping at a
 * match: the time taken depends neither on how much of a token is right nor on its length.
 *
 * <p>A blank token configures no credential. Under the production profile a token that {@link
 * TokenPolicy} refuses configures none either — the startup check already stops such an app, and a
 * process that skips that check (a worker) must not accept the development defaults.
 */
@Singleton
public class ApiCredentials {
  private record Credential(byte[] digest, Caller caller) {}

  private final List<Credential> credentials;

  public ApiCredentials(AuthConfig config, Profile profile) {
    List<Credential> accepted = new ArrayList<>();
    boolean production = profile.production();
    if (usable(config.operatorToken(), production, config)) {
      accepted.add(credential(config.operatorToken(), new Caller("operator", Role.OPERATOR)));
    }
    if (usable(config.viewerToken(), production, config)) {
      accepted.add(credential(config.viewerToken(), new Caller("viewer", Role.VIEWER)));
    }
    this.credentials = List.copyOf(accepted);
  }

  /** The caller a bearer token belongs to, if it is one of the configured credentials. */
  public Optional<Caller> identify(@Nullable String token) {
    if (token == null || token.isEmpty()) {
      return Optional.empty();
    }
    byte[] presented = sha256(token);
    Caller found = null;
    for (Credential credential : credentials) {
      // No early exit: every credential is compared, whatever matched before.
      if (MessageDigest.isEqual(presented, credential.digest()) && found == null) {
        found = credential.caller();
      }
    }
    return Optional.ofNullable(found);
  }

  private static boolean usable(@Nullable String token, boolean production, AuthConfig config) {
    if (token == null || token.isBlank()) {
      return false;
    }
    return !production || TokenPolicy.problems(config).isEmpty();
  }

  private static Credential credential(String token, Caller caller) {
    return new Credential(sha256(token), caller);
  }

  static byte[] sha256(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
  }
}

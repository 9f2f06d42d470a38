package dev.dripline.app.auth;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.security.authentication.Authentication;
import io.micronaut.security.token.validator.TokenValidator;
import jakarta.inject.Singleton;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * Validates the API's bearer tokens (spec §6.3) for micronaut-security: a configured token becomes
 * an {@link Authentication} named after its credential ({@code operator}, recorded as a run's
 * {@code createdBy}) with the credential's role; any other token none, so the request is
 * unauthenticated. A JWT validator can later sit beside this one.
 *
 * <p>Tokens are kept only as SHA-256 digests. A presented token is digested and compared with every
 * credential's digest by {@link MessageDigest#isEqual}, without stopping at a match: the time taken
 * depends neither on how much of a token is right nor on its length.
 *
 * <p>A blank token configures no credential. Under the production profile a token that {@link
 * TokenPolicy} refuses configures none either — the startup check already stops such an app, and a
 * process that skips that check (a worker) must not accept the development defaults.
 */
@Singleton
public class ApiTokenValidator implements TokenValidator<HttpRequest<?>> {
  /** The role that may do everything. */
  public static final String OPERATOR_ROLE = "OPERATOR";

  /** The role that may only read ({@code GET}, {@code HEAD}). */
  public static final String VIEWER_ROLE = "VIEWER";

  private record Credential(byte[] digest, Authentication authentication) {}

  private final List<Credential> credentials;

  public ApiTokenValidator(AuthConfig config, Profile profile) {
    List<Credential> accepted = new ArrayList<>();
    boolean production = profile.production();
    if (usable(config.operatorToken(), production, config)) {
      accepted.add(credential(config.operatorToken(), "operator", OPERATOR_ROLE));
    }
    if (usable(config.viewerToken(), production, config)) {
      accepted.add(credential(config.viewerToken(), "viewer", VIEWER_ROLE));
    }
    this.credentials = List.copyOf(accepted);
  }

  @Override
  public Publisher<Authentication> validateToken(String token, @Nullable HttpRequest<?> request) {
    return Mono.justOrEmpty(identify(token));
  }

  /** The credential a bearer token belongs to, if it is one of the configured ones. */
  Optional<Authentication> identify(@Nullable String token) {
    // The header's token as sent: "Bearer  <token> " names <token>.
    String presented = token == null ? "" : token.trim();
    if (presented.isEmpty()) {
      return Optional.empty();
    }
    byte[] digest = sha256(presented);
    Authentication found = null;
    for (Credential credential : credentials) {
      // No early exit: every credential is compared, whatever matched before.
      if (MessageDigest.isEqual(digest, credential.digest()) && found == null) {
        found = credential.authentication();
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

  private static Credential credential(String token, String name, String role) {
    return new Credential(sha256(token), Authentication.build(name, List.of(role)));
  }

  static byte[] sha256(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
  }
}

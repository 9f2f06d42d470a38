package dev.dripline.app.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.MutableHttpRequest;
import io.micronaut.security.authentication.Authentication;
import io.micronaut.security.token.bearer.BearerTokenConfigurationProperties;
import io.micronaut.security.token.bearer.BearerTokenReader;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

class ApiTokenValidatorTest {
  private static final String OPERATOR = "operator-secret-0123456789";
  private static final String VIEWER = "viewer-secret-0123456789";

  private static ApiTokenValidator validator(String operator, String viewer, boolean production) {
    return new ApiTokenValidator(
        new AuthConfig(operator, viewer, List.of()), new Profile(production));
  }

  /** What micronaut-security makes of a token: the authentication the validator emits, if any. */
  private static Optional<Authentication> validate(ApiTokenValidator validator, String token) {
    return Mono.from(validator.validateToken(token, null)).blockOptional();
  }

  /**
   * The whole way from an Authorization header: the library's bearer reader, then the validator.
   */
  private static Optional<Authentication> authenticate(@Nullable String authorization) {
    MutableHttpRequest<?> request = HttpRequest.GET("/api/runs");
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    BearerTokenReader reader = new BearerTokenReader(new BearerTokenConfigurationProperties());
    ApiTokenValidator validator = validator(OPERATOR, VIEWER, false);
    return reader.findToken(request).flatMap(token -> validate(validator, token));
  }

  @Test
  void eachTokenIdentifiesItsCredentialWithItsRole() {
    ApiTokenValidator validator = validator(OPERATOR, VIEWER, false);

    assertThat(validate(validator, OPERATOR))
        .hasValueSatisfying(
            caller -> {
              assertThat(caller.getName()).isEqualTo("operator");
              assertThat(caller.getRoles()).containsExactly(ApiTokenValidator.OPERATOR_ROLE);
            });
    assertThat(validate(validator, VIEWER))
        .hasValueSatisfying(
            caller -> {
              assertThat(caller.getName()).isEqualTo("viewer");
              assertThat(caller.getRoles()).containsExactly(ApiTokenValidator.VIEWER_ROLE);
            });
  }

  @ParameterizedTest(name = "\"{0}\"")
  @ValueSource(
      strings = {
        "",
        " ",
        "operator-secret-012345678",
        "operator-secret-01234567890",
        "OPERATOR-SECRET-0123456789",
        "operator-secret- 0123456789",
        "operator"
      })
  void anythingButAnExactTokenIsNoCredential(String presented) {
    assertThat(validate(validator(OPERATOR, VIEWER, false), presented)).isEmpty();
  }

  @Test
  void aBlankConfiguredTokenConfiguresNoCredential() {
    ApiTokenValidator validator = validator(OPERATOR, " ", false);

    assertThat(validate(validator, " ")).isEmpty();
    assertThat(validate(validator, "")).isEmpty();
    assertThat(validate(validator, OPERATOR)).isPresent();
  }

  @Test
  void developmentAcceptsTheDevelopmentDefaults() {
    ApiTokenValidator validator =
        validator(AuthConfig.DEV_OPERATOR_TOKEN, AuthConfig.DEV_VIEWER_TOKEN, false);

    assertThat(validate(validator, "dev-operator"))
        .hasValueSatisfying(
            caller ->
                assertThat(caller.getRoles()).containsExactly(ApiTokenValidator.OPERATOR_ROLE));
    assertThat(validate(validator, "dev-viewer"))
        .hasValueSatisfying(
            caller -> assertThat(caller.getRoles()).containsExactly(ApiTokenValidator.VIEWER_ROLE));
  }

  @Test
  void productionNeverAcceptsTokensItsPolicyRefuses() {
    ApiTokenValidator validator =
        validator(AuthConfig.DEV_OPERATOR_TOKEN, AuthConfig.DEV_VIEWER_TOKEN, true);

    assertThat(validate(validator, "dev-operator")).isEmpty();
    assertThat(validate(validator, "dev-viewer")).isEmpty();
  }

  @Test
  void productionAcceptsRealTokens() {
    assertThat(validate(validator(OPERATOR, VIEWER, true), OPERATOR)).isPresent();
  }

  @Test
  void digestsHaveOneLengthWhateverTheTokenSo() {
    // MessageDigest.isEqual is constant-time for equal lengths; comparing digests makes every
    // comparison one of 32 bytes, so the time says nothing about the configured token's length.
    assertThat(ApiTokenValidator.sha256("a")).hasSize(32);
    assertThat(ApiTokenValidator.sha256("x".repeat(10_000))).hasSize(32);
  }

  @Test
  void theBearerTokenIsTakenFromTheAuthorizationHeader() {
    assertThat(authenticate("Bearer " + OPERATOR))
        .map(Authentication::getName)
        .contains("operator");
    assertThat(authenticate("bearer " + VIEWER)).map(Authentication::getName).contains("viewer");
    assertThat(authenticate("BEARER  " + OPERATOR + " ")).isPresent();
    assertThat(authenticate(null)).isEmpty();
    assertThat(authenticate("Bearer")).isEmpty();
    assertThat(authenticate("Bearer ")).isEmpty();
    assertThat(authenticate("Bearer    ")).isEmpty();
    assertThat(authenticate("Basic " + OPERATOR)).isEmpty();
    assertThat(authenticate("Bearer" + OPERATOR)).isEmpty();
  }

  @Test
  void theConfigurationNeverShowsATokenInText() {
    AuthConfig config = new AuthConfig(OPERATOR, VIEWER, List.of("/health"));

    assertThat(config.toString()).doesNotContain(OPERATOR, VIEWER).contains("/health");
  }
}

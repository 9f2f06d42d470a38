package dev.dripline.app.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.micronaut.http.HttpMethod;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class ApiCredentialsTest {
  private static final String OPERATOR = "operator-secret-0123456789";
  private static final String VIEWER = "viewer-secret-0123456789";

  private static ApiCredentials credentials(String operator, String viewer, boolean production) {
    return new ApiCredentials(new AuthConfig(operator, viewer, List.of()), new Profile(production));
  }

  @Test
  void eachTokenIdentifiesItsCredential() {
    ApiCredentials credentials = credentials(OPERATOR, VIEWER, false);

    assertThat(credentials.identify(OPERATOR)).contains(new Caller("operator", Role.OPERATOR));
    assertThat(credentials.identify(VIEWER)).contains(new Caller("viewer", Role.VIEWER));
  }

  @ParameterizedTest(name = "\"{0}\"")
  @ValueSource(
      strings = {
        "",
        " ",
        "operator-secret-012345678",
        "operator-secret-01234567890",
        "OPERATOR-SECRET-0123456789",
        " operator-secret-0123456789",
        "viewer-secret-0123456789 ",
        "operator"
      })
  void anythingButAnExactTokenIsNoCredential(String presented) {
    assertThat(credentials(OPERATOR, VIEWER, false).identify(presented)).isEmpty();
  }

  @Test
  void noTokenIsNoCredential() {
    assertThat(credentials(OPERATOR, VIEWER, false).identify(null)).isEmpty();
  }

  @Test
  void aBlankConfiguredTokenConfiguresNoCredential() {
    ApiCredentials credentials = credentials(OPERATOR, " ", false);

    assertThat(credentials.identify(" ")).isEmpty();
    assertThat(credentials.identify("")).isEmpty();
    assertThat(credentials.identify(OPERATOR)).isPresent();
  }

  @Test
  void developmentAcceptsTheDevelopmentDefaults() {
    ApiCredentials credentials =
        credentials(AuthConfig.DEV_OPERATOR_TOKEN, AuthConfig.DEV_VIEWER_TOKEN, false);

    assertThat(credentials.identify("dev-operator")).map(Caller::role).contains(Role.OPERATOR);
    assertThat(credentials.identify("dev-viewer")).map(Caller::role).contains(Role.VIEWER);
  }

  @Test
  void productionNeverAcceptsTokensItsPolicyRefuses() {
    ApiCredentials credentials =
        credentials(AuthConfig.DEV_OPERATOR_TOKEN, AuthConfig.DEV_VIEWER_TOKEN, true);

    assertThat(credentials.identify("dev-operator")).isEmpty();
    assertThat(credentials.identify("dev-viewer")).isEmpty();
  }

  @Test
  void productionAcceptsRealTokens() {
    assertThat(credentials(OPERATOR, VIEWER, true).identify(OPERATOR)).isPresent();
  }

  @Test
  void digestsHaveOneLengthWhateverTheTokenSo() {
    // MessageDigest.isEqual is constant-time for equal lengths; comparing digests makes every
    // comparison one of 32 bytes, so the time says nothing about the configured token's length.
    assertThat(ApiCredentials.sha256("a")).hasSize(32);
    assertThat(ApiCredentials.sha256("x".repeat(10_000))).hasSize(32);
  }

  @ParameterizedTest
  @EnumSource(
      value = HttpMethod.class,
      names = {"GET", "HEAD"})
  void bothRolesMayRead(HttpMethod method) {
    assertThat(Role.VIEWER.mayUse(method)).isTrue();
    assertThat(Role.OPERATOR.mayUse(method)).isTrue();
  }

  @ParameterizedTest
  @EnumSource(
      value = HttpMethod.class,
      names = {"GET", "HEAD"},
      mode = EnumSource.Mode.EXCLUDE)
  void onlyTheOperatorMaySendAnythingElse(HttpMethod method) {
    assertThat(Role.VIEWER.mayUse(method)).isFalse();
    assertThat(Role.OPERATOR.mayUse(method)).isTrue();
  }

  @Test
  void theBearerTokenIsTakenFromTheAuthorizationHeader() {
    assertThat(ApiAuthFilter.bearerToken("Bearer abc")).contains("abc");
    assertThat(ApiAuthFilter.bearerToken("bearer abc")).contains("abc");
    assertThat(ApiAuthFilter.bearerToken("BEARER  abc ")).contains("abc");
    assertThat(ApiAuthFilter.bearerToken(null)).isEmpty();
    assertThat(ApiAuthFilter.bearerToken("Bearer")).isEmpty();
    assertThat(ApiAuthFilter.bearerToken("Bearer ")).isEmpty();
    assertThat(ApiAuthFilter.bearerToken("Bearer    ")).isEmpty();
    assertThat(ApiAuthFilter.bearerToken("Basic abc")).isEmpty();
    assertThat(ApiAuthFilter.bearerToken("Bearerabc")).isEmpty();
  }

  @Test
  void theConfigurationNeverShowsATokenInText() {
    AuthConfig config = new AuthConfig(OPERATOR, VIEWER, List.of("/health"));

    assertThat(config.toString()).doesNotContain(OPERATOR, VIEWER).contains("/health");
  }
}

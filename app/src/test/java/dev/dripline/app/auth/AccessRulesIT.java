package dev.dripline.app.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.app.Api;
import io.micronaut.context.annotation.Property;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.core.order.OrderUtil;
import io.micronaut.http.HttpMethod;
import io.micronaut.http.HttpRequest;
import io.micronaut.security.authentication.Authentication;
import io.micronaut.security.rules.SecurityRule;
import io.micronaut.security.rules.SecurityRuleResult;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.web.router.Router;
import jakarta.inject.Inject;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

/**
 * The access rules as the app configures them (spec §6.3): micronaut-security's rules, consulted in
 * their order as its security filter does, decide every method for each role. {@link AuthMatrixIT}
 * checks the same over HTTP for the API's endpoints; this covers methods no endpoint has.
 */
@MicronautTest(transactional = false)
@Property(name = "dripline.temporal.address", value = "127.0.0.1:1")
class AccessRulesIT {
  @Inject List<SecurityRule<HttpRequest<?>>> rules;
  @Inject ApiTokenValidator validator;
  @Inject Router router;

  /** The first rule's answer that is not UNKNOWN, as micronaut-security's filter takes it. */
  private SecurityRuleResult decide(
      HttpMethod method, String path, @Nullable Authentication caller) {
    HttpRequest<?> request =
        method == HttpMethod.CUSTOM
            ? HttpRequest.create(method, path, "PURGE")
            : HttpRequest.create(method, path);
    return rules.stream()
        .sorted(OrderUtil.COMPARATOR)
        .map(rule -> Mono.from(rule.check(request, caller)).block())
        .filter(result -> result != null && result != SecurityRuleResult.UNKNOWN)
        .findFirst()
        .orElse(SecurityRuleResult.UNKNOWN);
  }

  private Authentication caller(String token) {
    return validator.identify(token).orElseThrow();
  }

  @ParameterizedTest
  @EnumSource(
      value = HttpMethod.class,
      names = {"GET", "HEAD"})
  void bothRolesMayRead(HttpMethod method) {
    assertThat(decide(method, "/api/runs", caller(Api.VIEWER_TOKEN)))
        .isEqualTo(SecurityRuleResult.ALLOWED);
    assertThat(decide(method, "/api/runs", caller(Api.OPERATOR_TOKEN)))
        .isEqualTo(SecurityRuleResult.ALLOWED);
  }

  @ParameterizedTest
  @EnumSource(
      value = HttpMethod.class,
      names = {"GET", "HEAD"},
      mode = EnumSource.Mode.EXCLUDE)
  void onlyTheOperatorMaySendAnythingElse(HttpMethod method) {
    assertThat(decide(method, "/api/runs", caller(Api.VIEWER_TOKEN)))
        .isEqualTo(SecurityRuleResult.REJECTED);
    assertThat(decide(method, "/api/runs", caller(Api.OPERATOR_TOKEN)))
        .isEqualTo(SecurityRuleResult.ALLOWED);
  }

  @ParameterizedTest
  @EnumSource(HttpMethod.class)
  void withoutATokenNothingButOpenReadsPasses(HttpMethod method) {
    SecurityRuleResult expected =
        method == HttpMethod.GET || method == HttpMethod.HEAD
            ? SecurityRuleResult.ALLOWED
            : SecurityRuleResult.REJECTED;

    assertThat(decide(method, "/health", null)).isEqualTo(expected);
    assertThat(decide(method, "/api/runs", null)).isEqualTo(SecurityRuleResult.REJECTED);
  }

  @ParameterizedTest
  @ValueSource(strings = {"/", "/no-such-path", "/health/../api/runs", "/beans"})
  void unknownPathsFollowTheSameRules(String path) {
    assertThat(decide(HttpMethod.GET, path, null)).isEqualTo(SecurityRuleResult.REJECTED);
    assertThat(decide(HttpMethod.GET, path, caller(Api.VIEWER_TOKEN)))
        .isEqualTo(SecurityRuleResult.ALLOWED);
    assertThat(decide(HttpMethod.POST, path, caller(Api.VIEWER_TOKEN)))
        .isEqualTo(SecurityRuleResult.REJECTED);
    assertThat(decide(HttpMethod.POST, path, caller(Api.OPERATOR_TOKEN)))
        .isEqualTo(SecurityRuleResult.ALLOWED);
  }

  @Test
  void securityAddsNoRoutes() {
    // Its token introspection would let any caller, the viewer included, post tokens to test them
    // (it is @Secured, which the library consults before the URL map); login and logout have no
    // place in a bearer-token API.
    assertThat(router.uriRoutes().map(route -> route.getUriMatchTemplate().toPathString()))
        .contains("/api/runs", "/health")
        .doesNotContain("/token_info", "/login", "/logout", "/oauth/access_token");
  }
}

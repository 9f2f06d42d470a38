package dev.dripline.app.auth;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpMethod;
import io.micronaut.http.HttpRequest;
import io.micronaut.security.authentication.Authentication;
import io.micronaut.security.rules.ConfigurationInterceptUrlMapRule;
import io.micronaut.security.rules.SecurityRule;
import io.micronaut.security.rules.SecurityRuleResult;
import jakarta.inject.Singleton;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * Which role may send which request: reads ({@code GET}, {@code HEAD}) need the viewer's or the
 * operator's token, everything else the operator's. Consulted after {@link OpenPathsRule}, in the
 * place of micronaut-security's intercept-url-map, and decides every request it is asked about: a
 * request without a token is rejected (401), one whose token lacks the role too (403).
 */
@Singleton
public class RoleRule implements SecurityRule<HttpRequest<?>> {
  /** Where the configured intercept-url-map would be consulted; Dripline configures none. */
  public static final int ORDER = ConfigurationInterceptUrlMapRule.ORDER;

  /** The roles that may send a request, by its method; any other method: {@link #WRITERS}. */
  private static final Map<HttpMethod, Set<String>> BY_METHOD =
      Map.of(
          HttpMethod.GET, Set.of(ApiTokenValidator.OPERATOR_ROLE, ApiTokenValidator.VIEWER_ROLE),
          HttpMethod.HEAD, Set.of(ApiTokenValidator.OPERATOR_ROLE, ApiTokenValidator.VIEWER_ROLE));

  private static final Set<String> WRITERS = Set.of(ApiTokenValidator.OPERATOR_ROLE);

  @Override
  public Publisher<SecurityRuleResult> check(
      HttpRequest<?> request, @Nullable Authentication authentication) {
    return Mono.just(
        authentication != null && mayAny(authentication.getRoles(), request.getMethod())
            ? SecurityRuleResult.ALLOWED
            : SecurityRuleResult.REJECTED);
  }

  private static boolean mayAny(Collection<String> roles, HttpMethod method) {
    Set<String> allowed = BY_METHOD.getOrDefault(method, WRITERS);
    return roles.stream().anyMatch(allowed::contains);
  }

  @Override
  public int getOrder() {
    return ORDER;
  }
}

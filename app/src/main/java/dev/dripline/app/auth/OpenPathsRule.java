package dev.dripline.app.auth;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.core.util.PathMatcher;
import io.micronaut.http.HttpMethod;
import io.micronaut.http.HttpRequest;
import io.micronaut.security.authentication.Authentication;
import io.micronaut.security.rules.SecurityRule;
import io.micronaut.security.rules.SecurityRuleResult;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.regex.Pattern;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * Lets reads ({@code GET}, {@code HEAD}) of the open paths through without a token ({@code
 * DRIPLINE_AUTH_OPEN_PATHS}; by default {@code /health}, {@code /health/**}, {@code /prometheus},
 * {@code /openapi.yml} and {@code /swagger-ui/**}); everything else is left to {@link RoleRule},
 * which it is consulted before. Entries are Ant-style patterns, as in that map: {@code /x/**}
 * covers {@code /x} and every path below it.
 *
 * <p>A path with anything unusual — dot segments, empty segments, percent-escapes, {@code ;} — is
 * never open, so a crafted path cannot pass as an open one.
 */
@Singleton
public class OpenPathsRule implements SecurityRule<HttpRequest<?>> {
  /** Before {@link RoleRule}, which decides every request it is asked about. */
  public static final int ORDER = RoleRule.ORDER - 1;

  private static final Pattern PLAIN_SEGMENTS = Pattern.compile("(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*");

  private final List<String> patterns;

  public OpenPathsRule(AuthConfig config) {
    this.patterns =
        config.openPaths().stream().map(String::trim).filter(entry -> !entry.isEmpty()).toList();
  }

  @Override
  public Publisher<SecurityRuleResult> check(
      HttpRequest<?> request, @Nullable Authentication authentication) {
    boolean read = request.getMethod() == HttpMethod.GET || request.getMethod() == HttpMethod.HEAD;
    return Mono.just(
        read && isOpen(request.getPath())
            ? SecurityRuleResult.ALLOWED
            : SecurityRuleResult.UNKNOWN);
  }

  /** Whether reads of this path need no token. */
  boolean isOpen(String path) {
    return PLAIN_SEGMENTS.matcher(path).matches()
        && patterns.stream().anyMatch(pattern -> PathMatcher.ANT.matches(pattern, path));
  }

  @Override
  public int getOrder() {
    return ORDER;
  }
}

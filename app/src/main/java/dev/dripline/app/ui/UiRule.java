package dev.dripline.app.ui;

import dev.dripline.app.auth.OpenPathsRule;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.security.authentication.Authentication;
import io.micronaut.security.rules.SecurityRule;
import io.micronaut.security.rules.SecurityRuleResult;
import jakarta.inject.Singleton;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * Leaves the dashboard's paths ({@code /ui} and below) to the dashboard: it signs its users in with
 * a session cookie, not a bearer token, and answers with pages (a redirect to the sign-in page, a
 * 403 page) rather than problem documents. {@link UiFilter} decides who may see and send what;
 * every other path is left to the API's rules.
 */
@Singleton
public class UiRule implements SecurityRule<HttpRequest<?>> {
  @Override
  public Publisher<SecurityRuleResult> check(
      HttpRequest<?> request, @Nullable Authentication authentication) {
    return Mono.just(
        UiFilter.isUiPath(request.getPath())
            ? SecurityRuleResult.ALLOWED
            : SecurityRuleResult.UNKNOWN);
  }

  @Override
  public int getOrder() {
    return OpenPathsRule.ORDER - 1;
  }
}

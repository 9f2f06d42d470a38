package dev.dripline.app.ui;

import dev.dripline.app.audit.Audited;
import io.micronaut.context.annotation.Requires;
import io.micronaut.http.HttpMethod;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.http.annotation.Filter;
import io.micronaut.http.cookie.Cookie;
import io.micronaut.http.filter.HttpServerFilter;
import io.micronaut.http.filter.ServerFilterChain;
import io.micronaut.http.filter.ServerFilterPhase;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Pattern;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * Who may see and send what on the dashboard. The sign-in page and the assets are open; every other
 * page needs a session ({@link UiSessions}): without one a read is sent to the sign-in page and
 * anything else refused (401). Only the operator may send anything but a read: a viewer's POST is a
 * 403 page, before any handler runs (signing out excepted). The form token of a POST is checked by
 * {@link UiForms}, which every POST handler calls first.
 */
@Requires(notEnv = "worker")
@Filter("/ui/**")
public class UiFilter implements HttpServerFilter {
  /** The dashboard's root. */
  public static final String ROOT = "/ui";

  private static final Pattern UI_PATH = Pattern.compile("/ui(/.*)?");

  private final UiSessions sessions;
  private final UiPages pages;

  public UiFilter(UiSessions sessions, UiPages pages) {
    this.sessions = sessions;
    this.pages = pages;
  }

  /** Whether {@code path} is the dashboard's. */
  static boolean isUiPath(String path) {
    return UI_PATH.matcher(path).matches();
  }

  @Override
  public Publisher<MutableHttpResponse<?>> doFilter(
      HttpRequest<?> request, ServerFilterChain chain) {
    String path = request.getPath();
    if (path.equals(ROOT + "/login") || path.startsWith(ROOT + "/assets/")) {
      return chain.proceed(request);
    }
    Optional<UiSession> session =
        sessions.session(
            request.getCookies().findCookie(UiSessions.COOKIE).map(Cookie::getValue).orElse(null));
    boolean read = request.getMethod() == HttpMethod.GET || request.getMethod() == HttpMethod.HEAD;
    if (session.isEmpty()) {
      if (read) {
        String next = request.getUri().toString();
        return Mono.just(
            HttpResponse.seeOther(
                URI.create(
                    ROOT + "/login?next=" + URLEncoder.encode(next, StandardCharsets.UTF_8))));
      }
      return Mono.just(
          pages.refusal(
              request, HttpStatus.UNAUTHORIZED, "Sign in first: your session has ended.", null));
    }
    if (!read && !session.get().operator() && !path.equals(ROOT + "/logout")) {
      return Mono.just(
          pages.refusal(
              request,
              HttpStatus.FORBIDDEN,
              "The viewer may only read; this needs the operator's sign-in.",
              session.get()));
    }
    request.setAttribute(UiSession.ATTRIBUTE, session.get());
    request.setAttribute(Audited.ACTOR, session.get().name());
    return chain.proceed(request);
  }

  @Override
  public int getOrder() {
    return ServerFilterPhase.SECURITY.after();
  }
}

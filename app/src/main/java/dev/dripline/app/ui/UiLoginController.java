package dev.dripline.app.ui;

import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Consumes;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.Produces;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.cookie.Cookie;
import io.swagger.v3.oas.annotations.Hidden;
import java.net.URI;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Signing in to the dashboard with one of the API's tokens, and signing out. The sign-in form has
 * no session yet, so its form token is a random value both in a cookie and in the form (a POST from
 * another site can set neither).
 */
@Requires(notEnv = "worker")
@Produces(MediaType.TEXT_HTML)
@Hidden // the dashboard's pages are not the API: not in /openapi.yml
@Controller(UiFilter.ROOT)
public class UiLoginController {
  /** Where a sign-in may lead: a dashboard path, never another site. */
  private static final Pattern NEXT =
      Pattern.compile("/ui(/[A-Za-z0-9/_.-]*)?(\\?[A-Za-z0-9=&_.%+-]*)?");

  private final UiSessions sessions;
  private final UiPages pages;
  private final UiForms forms;

  public UiLoginController(UiSessions sessions, UiPages pages, UiForms forms) {
    this.sessions = sessions;
    this.pages = pages;
    this.forms = forms;
  }

  @Get
  public HttpResponse<?> root() {
    return HttpResponse.seeOther(URI.create(UiFilter.ROOT + "/runs"));
  }

  @Get("/login")
  public HttpResponse<?> loginPage(HttpRequest<?> request, @QueryValue @Nullable String next) {
    return login(request, HttpStatus.OK, next, null);
  }

  @Post("/login")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  public HttpResponse<?> signIn(HttpRequest<?> request, @Body @Nullable Map<String, String> form) {
    Map<String, String> fields = form == null ? Map.of() : form;
    String expected =
        request.getCookies().findCookie(UiSessions.LOGIN_COOKIE).map(Cookie::getValue).orElse(null);
    String next = fields.get("next");
    if (!UiSessions.sameToken(fields.get(UiForms.CSRF_FIELD), expected)) {
      return login(
          request,
          HttpStatus.FORBIDDEN,
          next,
          "This form's security token is missing or out of date: try again.");
    }
    return sessions
        .signIn(fields.get("token"))
        .<HttpResponse<?>>map(
            session ->
                HttpResponse.seeOther(URI.create(safeNext(next)))
                    .cookie(sessions.sessionCookie(session))
                    .cookie(sessions.cleared(UiSessions.LOGIN_COOKIE)))
        .orElseGet(
            () ->
                login(
                    request,
                    HttpStatus.UNAUTHORIZED,
                    next,
                    "That token is neither the operator's (DRIPLINE_OPERATOR_TOKEN) nor the"
                        + " viewer's (DRIPLINE_VIEWER_TOKEN)."));
  }

  @Post("/logout")
  @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
  public HttpResponse<?> signOut(HttpRequest<?> request, @Body @Nullable Map<String, String> form) {
    forms.accept(request, form);
    return HttpResponse.seeOther(URI.create(UiFilter.ROOT + "/login"))
        .cookie(sessions.cleared(UiSessions.COOKIE));
  }

  private MutableHttpResponse<?> login(
      HttpRequest<?> request, HttpStatus status, @Nullable String next, @Nullable String error) {
    String token =
        request
            .getCookies()
            .findCookie(UiSessions.LOGIN_COOKIE)
            .map(Cookie::getValue)
            .filter(value -> !value.isBlank())
            .orElseGet(sessions::loginToken);
    Map<String, Object> model =
        pages.model(
            "Sign in",
            "",
            null,
            Map.of("next", safeNext(next), "error", error == null ? "" : error));
    model.put("csrf", token);
    return UiPages.page(status, "login", model).cookie(sessions.loginCookie(token));
  }

  private static String safeNext(@Nullable String next) {
    return next != null
            && NEXT.matcher(next).matches()
            && !next.startsWith(UiFilter.ROOT + "/login")
        ? next
        : UiFilter.ROOT + "/runs";
  }
}

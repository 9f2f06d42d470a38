package dev.dripline.app.ui;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpStatus;
import jakarta.inject.Singleton;
import java.util.Map;

/**
 * The checks every dashboard form's POST passes before it does anything: a session (the {@link
 * UiFilter} has put it in the request) and the session's form token in field {@value #CSRF_FIELD}.
 * A missing or wrong token is a 403 page: the request may come from another site's page.
 */
@Singleton
public class UiForms {
  /** The form field that carries the session's form token. */
  public static final String CSRF_FIELD = "_csrf";

  /**
   * The session of a form's POST whose token is right.
   *
   * @throws UiRefusal when there is no session or the token is missing or wrong
   */
  public UiSession accept(HttpRequest<?> request, @Nullable Map<String, String> form) {
    UiSession session =
        request
            .getAttribute(UiSession.ATTRIBUTE, UiSession.class)
            .orElseThrow(() -> UiRefusal.ofCaller(HttpStatus.UNAUTHORIZED, "Sign in first.", null));
    String presented = form == null ? null : form.get(CSRF_FIELD);
    if (!UiSessions.sameToken(presented, session.csrfToken())) {
      throw UiRefusal.ofCaller(
          HttpStatus.FORBIDDEN,
          "This form's security token is missing or out of date: reload the page and try again.",
          session);
    }
    return session;
  }
}

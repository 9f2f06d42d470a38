package dev.dripline.app.ui;

/**
 * A signed-in dashboard user: the credential they signed in with and the form token of their
 * session.
 *
 * @param name {@code operator} or {@code viewer}, as the API names the credential
 * @param operator whether they may act (the operator's token) or only read
 * @param csrfToken the token every form of this session carries ({@link UiSessions#csrfToken})
 */
public record UiSession(String name, boolean operator, String csrfToken) {
  /** The request attribute the {@link UiFilter} puts the session in. */
  public static final String ATTRIBUTE = "dripline.ui.session";
}

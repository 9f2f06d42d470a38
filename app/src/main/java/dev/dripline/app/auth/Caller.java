package dev.dripline.app.auth;

/**
 * Who sent an authenticated request: the credential's name (recorded as {@code createdBy} of what
 * it creates) and its role. Never holds the token itself.
 *
 * @param name the credential's name, e.g. {@code operator}
 * @param role what it may do
 */
public record Caller(String name, Role role) {
  /** The request attribute under which {@link ApiAuthFilter} leaves the caller for controllers. */
  public static final String ATTRIBUTE = "dripline.caller";
}

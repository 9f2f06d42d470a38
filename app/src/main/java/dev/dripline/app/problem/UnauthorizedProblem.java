package dev.dripline.app.problem;

/**
 * The request carries no bearer token, or one that is no credential of this API: 401, with a {@code
 * WWW-Authenticate: Bearer} challenge. The detail never repeats what was sent.
 */
public final class UnauthorizedProblem extends ProblemException {
  private static final long serialVersionUID = 1L;

  /** The challenge of a request that sent no token. */
  public static final String CHALLENGE = "Bearer realm=\"dripline\"";

  private final boolean tokenPresented;

  private UnauthorizedProblem(String detail, boolean tokenPresented) {
    super(detail);
    this.tokenPresented = tokenPresented;
  }

  /** No usable {@code Authorization: Bearer} header. */
  public static UnauthorizedProblem missingToken() {
    return new UnauthorizedProblem(
        "this endpoint needs a bearer token: send 'Authorization: Bearer <token>' with"
            + " DRIPLINE_OPERATOR_TOKEN or DRIPLINE_VIEWER_TOKEN",
        false);
  }

  /** A bearer token that matches no configured credential. */
  public static UnauthorizedProblem invalidToken() {
    return new UnauthorizedProblem(
        "the bearer token is not valid for this API (neither DRIPLINE_OPERATOR_TOKEN nor"
            + " DRIPLINE_VIEWER_TOKEN)",
        true);
  }

  /** The {@code WWW-Authenticate} challenge (RFC 6750 §3): names the error if a token was sent. */
  public String challenge() {
    return tokenPresented ? "Bearer realm=\"dripline\", error=\"invalid_token\"" : CHALLENGE;
  }

  @Override
  public Problem toProblem() {
    return new Problem(
        Problem.TYPE_BASE + "unauthorized", "Unauthorized", 401, getMessage(), null, null);
  }
}

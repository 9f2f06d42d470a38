package dev.dripline.app.problem;

import io.micronaut.context.annotation.Replaces;
import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.http.server.exceptions.ExceptionHandler;
import io.micronaut.security.authentication.Authentication;
import io.micronaut.security.authentication.AuthorizationException;
import io.micronaut.security.authentication.DefaultAuthorizationExceptionHandler;
import io.micronaut.security.authentication.WwwAuthenticateChallenge;
import io.micronaut.security.token.reader.TokenResolver;
import jakarta.inject.Singleton;

/**
 * Answers the requests micronaut-security's access rules refuse with problem documents (spec §6.3),
 * instead of the library's bare statuses and redirects: 401 with a {@code WWW-Authenticate: Bearer}
 * challenge when no credential was recognised ({@code error="invalid_token"} if a token was sent),
 * 403 when the credential's role may not send this request. Nothing here repeats what was sent.
 */
@Singleton
@Replaces(DefaultAuthorizationExceptionHandler.class)
public class AuthorizationProblemHandler
    implements ExceptionHandler<AuthorizationException, HttpResponse<Problem>> {
  private static final String REALM = "dripline";

  private final TokenResolver<HttpRequest<?>> tokens;

  public AuthorizationProblemHandler(TokenResolver<HttpRequest<?>> tokens) {
    this.tokens = tokens;
  }

  @Override
  @SuppressWarnings("rawtypes") // the interface declares a raw HttpRequest
  public HttpResponse<Problem> handle(HttpRequest request, AuthorizationException exception) {
    Authentication caller = exception.getAuthentication();
    if (caller != null) {
      return problem(
          HttpStatus.FORBIDDEN,
          "forbidden",
          "the "
              + caller.getName()
              + " token may only read (GET, HEAD); "
              + request.getMethodName()
              + " needs the operator token (DRIPLINE_OPERATOR_TOKEN)");
    }
    boolean tokenSent = tokens.resolveTokens(request).stream().anyMatch(token -> !token.isBlank());
    WwwAuthenticateChallenge.Builder challenge =
        WwwAuthenticateChallenge.builder().authScheme("Bearer").param("realm", REALM);
    String detail;
    if (tokenSent) {
      challenge.param("error", "invalid_token");
      detail =
          "the bearer token is not valid for this API (neither DRIPLINE_OPERATOR_TOKEN nor"
              + " DRIPLINE_VIEWER_TOKEN)";
    } else {
      detail =
          "this endpoint needs a bearer token: send 'Authorization: Bearer <token>' with"
              + " DRIPLINE_OPERATOR_TOKEN or DRIPLINE_VIEWER_TOKEN";
    }
    return problem(HttpStatus.UNAUTHORIZED, "unauthorized", detail)
        .header(HttpHeaders.WWW_AUTHENTICATE, challenge.build().toString());
  }

  private static MutableHttpResponse<Problem> problem(
      HttpStatus status, String type, String detail) {
    Problem problem =
        new Problem(
            Problem.TYPE_BASE + type, status.getReason(), status.getCode(), detail, null, null);
    return HttpResponse.<Problem>status(status).contentType(Problem.MEDIA_TYPE).body(problem);
  }
}

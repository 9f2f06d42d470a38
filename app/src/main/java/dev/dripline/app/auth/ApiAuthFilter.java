package dev.dripline.app.auth;

import dev.dripline.app.problem.ForbiddenProblem;
import dev.dripline.app.problem.Problem;
import dev.dripline.app.problem.ProblemException;
import dev.dripline.app.problem.UnauthorizedProblem;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.core.order.Ordered;
import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.http.annotation.RequestFilter;
import io.micronaut.http.annotation.ServerFilter;
import io.micronaut.http.filter.ServerFilterPhase;
import java.util.Locale;
import java.util.Optional;

/**
 * Authenticates every request to this server before anything else sees it (spec §6.3): reads of an
 * open path ({@link OpenPaths}) pass as they are; everything else needs {@code Authorization:
 * Bearer <token>} with a configured credential (401 otherwise), and a viewer may only read (403
 * otherwise). The caller is left in the request attribute {@link Caller#ATTRIBUTE}. Nothing here
 * logs or echoes a token.
 */
@ServerFilter(ServerFilter.MATCH_ALL_PATTERN)
public class ApiAuthFilter implements Ordered {
  private static final String BEARER = "bearer ";

  private final ApiCredentials credentials;
  private final OpenPaths openPaths;

  public ApiAuthFilter(ApiCredentials credentials, AuthConfig config) {
    this.credentials = credentials;
    this.openPaths = new OpenPaths(config.openPaths());
  }

  /** Before the API's own filters, in the phase Micronaut reserves for security. */
  @Override
  public int getOrder() {
    return ServerFilterPhase.SECURITY.order();
  }

  /** {@code null} lets the request through; a response answers it here. */
  @RequestFilter
  @Nullable
  public HttpResponse<Problem> authenticate(HttpRequest<?> request) {
    if (Role.isRead(request.getMethod()) && openPaths.contains(request.getPath())) {
      return null;
    }
    Optional<String> token = bearerToken(request.getHeaders().get(HttpHeaders.AUTHORIZATION));
    if (token.isEmpty()) {
      return unauthorized(UnauthorizedProblem.missingToken());
    }
    Optional<Caller> caller = credentials.identify(token.get());
    if (caller.isEmpty()) {
      return unauthorized(UnauthorizedProblem.invalidToken());
    }
    if (!caller.get().role().mayUse(request.getMethod())) {
      return problem(ForbiddenProblem.readOnly(caller.get().name(), request.getMethodName()));
    }
    request.setAttribute(Caller.ATTRIBUTE, caller.get());
    return null;
  }

  /** The token of an {@code Authorization: Bearer <token>} header (scheme case-insensitive). */
  static Optional<String> bearerToken(@Nullable String authorization) {
    if (authorization == null
        || authorization.length() <= BEARER.length()
        || !authorization.substring(0, BEARER.length()).toLowerCase(Locale.ROOT).equals(BEARER)) {
      return Optional.empty();
    }
    String token = authorization.substring(BEARER.length()).trim();
    return token.isEmpty() ? Optional.empty() : Optional.of(token);
  }

  private static HttpResponse<Problem> unauthorized(UnauthorizedProblem problem) {
    return problem(problem).header(HttpHeaders.WWW_AUTHENTICATE, problem.challenge());
  }

  private static MutableHttpResponse<Problem> problem(ProblemException exception) {
    Problem problem = exception.toProblem();
    return HttpResponse.<Problem>status(HttpStatus.valueOf(problem.status()))
        .contentType(Problem.MEDIA_TYPE)
        .body(problem);
  }
}

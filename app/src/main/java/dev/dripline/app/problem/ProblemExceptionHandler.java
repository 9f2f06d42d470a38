package dev.dripline.app.problem;

import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.server.exceptions.ExceptionHandler;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Maps the API's own failures ({@link ProblemException}) to problem documents. */
@Singleton
public class ProblemExceptionHandler
    implements ExceptionHandler<ProblemException, HttpResponse<Problem>> {
  private static final Logger log = LoggerFactory.getLogger(ProblemExceptionHandler.class);

  @Override
  @SuppressWarnings("rawtypes") // the interface declares a raw HttpRequest
  public HttpResponse<Problem> handle(HttpRequest request, ProblemException exception) {
    Problem problem = exception.toProblem();
    if (exception instanceof UnavailableProblem) {
      // The detail already names Temporal's reason; the stack adds nothing an operator needs.
      log.warn("{} {}: {}", request.getMethod(), request.getPath(), problem.detail());
    }
    return HttpResponse.<Problem>status(HttpStatus.valueOf(problem.status()))
        .contentType(Problem.MEDIA_TYPE)
        .body(problem);
  }
}

package dev.dripline.app.problem;

import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.server.exceptions.ExceptionHandler;
import jakarta.inject.Singleton;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The catch-all: any exception no more specific handler claims becomes a 500 problem. Its detail
 * carries only a reference to the log line, never the exception's message or stack, which may hold
 * SQL or internal names.
 */
@Singleton
public class UnexpectedErrorHandler implements ExceptionHandler<Exception, HttpResponse<Problem>> {
  private static final Logger log = LoggerFactory.getLogger(UnexpectedErrorHandler.class);

  @Override
  @SuppressWarnings("rawtypes") // the interface declares a raw HttpRequest
  public HttpResponse<Problem> handle(HttpRequest request, Exception exception) {
    String reference = UUID.randomUUID().toString();
    log.error(
        "{} {} failed (reference {})",
        request.getMethod(),
        request.getPath(),
        reference,
        exception);
    Problem problem =
        new Problem(
            Problem.TYPE_BASE + "internal-error",
            "Internal server error",
            500,
            "unexpected error; reference " + reference,
            null,
            null);
    return HttpResponse.<Problem>serverError().contentType(Problem.MEDIA_TYPE).body(problem);
  }
}

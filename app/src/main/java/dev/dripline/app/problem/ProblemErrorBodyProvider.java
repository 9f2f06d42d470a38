package dev.dripline.app.problem;

import dev.dripline.store.catalogue.FieldError;
import io.micronaut.context.annotation.Replaces;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.server.exceptions.response.Error;
import io.micronaut.http.server.exceptions.response.ErrorContext;
import io.micronaut.http.server.exceptions.response.JsonErrorResponseBodyProvider;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;

/**
 * Renders the errors Micronaut itself detects — malformed JSON, unconvertible or missing arguments,
 * unknown routes, wrong methods or media types — as problem documents, so every error of the API
 * has the same shape. Micronaut's own handlers (for {@code JsonSyntaxException}, {@code
 * ConversionErrorException}, {@code UnsatisfiedArgumentException} and the rest) choose the status;
 * this bean only writes the body.
 */
@Singleton
@Replaces(JsonErrorResponseBodyProvider.class)
public class ProblemErrorBodyProvider implements JsonErrorResponseBodyProvider<Problem> {

  @Override
  public Problem body(ErrorContext context, HttpResponse<?> response) {
    int status = response.code();
    List<FieldError> fieldErrors = new ArrayList<>();
    List<String> messages = new ArrayList<>();
    for (Error error : context.getErrors()) {
      messages.add(error.getMessage());
      error.getPath().ifPresent(path -> fieldErrors.add(new FieldError(path, error.getMessage())));
    }
    String detail = messages.isEmpty() ? response.reason() : String.join("; ", messages);
    if (status == 413 && messages.isEmpty()) {
      // Netty's own limits (request line, headers) say nothing more than the status.
      detail =
          "the request is too large: its request line, headers or body exceed the server's limits";
    }
    if (status == 400 && fieldErrors.isEmpty()) {
      // A body that could not be read at all: report it against the body, like other fields.
      fieldErrors.add(new FieldError("body", detail));
    }
    return Problem.ofStatus(
        status, response.reason(), detail, fieldErrors.isEmpty() ? null : fieldErrors);
  }

  @Override
  public String contentType() {
    return Problem.MEDIA_TYPE;
  }
}

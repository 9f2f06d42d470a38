package dev.dripline.app.problem;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.store.catalogue.FieldError;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.util.List;

/**
 * An RFC 9457 problem document, the body of every error response of the API.
 *
 * @param type a URI naming the kind of problem
 * @param title a short summary of that kind
 * @param status the HTTP status
 * @param detail what went wrong with this request
 * @param errors one entry per rejected field, for validation problems only
 * @param existingRunId the active run a duplicate request collided with (R3), else absent
 */
@Serdeable
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(
    String type,
    String title,
    int status,
    String detail,
    @Nullable List<FieldError> errors,
    @Nullable Long existingRunId) {

  /** The media type of problem documents. */
  public static final String MEDIA_TYPE = "application/problem+json";

  static final String TYPE_BASE = "https://dripline.dev/problems/";

  /** A problem of a kind known only by its HTTP status, as RFC 9457 suggests. */
  public static Problem ofStatus(int status, String title, String detail, List<FieldError> errors) {
    return new Problem("about:blank", title, status, detail, errors, null);
  }
}

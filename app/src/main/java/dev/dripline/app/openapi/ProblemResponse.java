package dev.dripline.app.openapi;

import dev.dripline.app.problem.Problem;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.responses.ApiResponses;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The problem responses ({@code application/problem+json}, the {@link Problem} schema) that several
 * operations share, each written once as an annotation meta-annotated with its {@link ApiResponse}:
 * micronaut-openapi reads an {@code @ApiResponse} on an annotation of a controller or method as if
 * it stood there. A response whose description is an operation's own stays an {@code @ApiResponse}
 * on that method.
 */
public final class ProblemResponse {
  private ProblemResponse() {}

  /** 401: a missing or wrong token; every {@code /api} controller carries it. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target({ElementType.TYPE, ElementType.METHOD})
  @ApiResponse(
      responseCode = "401",
      description = "no valid bearer token",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface Unauthorized {}

  /** 403: the viewer's token on a method other than GET or HEAD. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponse(
      responseCode = "403",
      description = "the viewer token: writes need the operator token",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface ViewerForbidden {}

  /** 400: fields of the body are invalid, each reported. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponse(
      responseCode = "400",
      description = "a field is invalid: one error each",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface InvalidFields {}

  /** 400: a query parameter the operation does not know, or a bad value. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponse(
      responseCode = "400",
      description = "an unknown or invalid query parameter",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface InvalidQuery {}

  /** 400: a field of the body is invalid. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponse(
      responseCode = "400",
      description = "a field is invalid",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface InvalidField {}

  /** 404: the path names no run. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponse(
      responseCode = "404",
      description = "no such run",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface NoSuchRun {}

  /** 404: the path names no target. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponse(
      responseCode = "404",
      description = "no such target",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface NoSuchTarget {}

  /** 404: the path names no webhook. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponse(
      responseCode = "404",
      description = "no such webhook",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface NoSuchWebhook {}

  /** 409: the run has ended. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponse(
      responseCode = "409",
      description = "the run has ended",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface RunEnded {}

  /** 503: Temporal cannot be reached; the signal is not sent. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponse(
      responseCode = "503",
      description = "Temporal cannot be reached; nothing sent",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface TemporalUnreachable {}

  /** 503: no worker answered the update in time; nothing changed. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponse(
      responseCode = "503",
      description = "no worker answered in time; nothing changed",
      content =
          @Content(
              mediaType = Problem.MEDIA_TYPE,
              schema = @Schema(implementation = Problem.class)))
  public @interface NoWorkerAnswered {}

  /** 413 and 415: a body larger than 1 MB, or not JSON; every operation that takes a body. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  @ApiResponses({
    @ApiResponse(
        responseCode = "413",
        description = "a body of more than 1 MB",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class))),
    @ApiResponse(
        responseCode = "415",
        description = "a body that is not application/json",
        content =
            @Content(
                mediaType = Problem.MEDIA_TYPE,
                schema = @Schema(implementation = Problem.class)))
  })
  public @interface JsonBodyRefused {}
}

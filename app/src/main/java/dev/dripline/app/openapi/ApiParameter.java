package dev.dripline.app.openapi;

import io.swagger.v3.oas.annotations.Parameter;
import io.swagger.v3.oas.annotations.media.Schema;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The path and query parameters that several operations share, each written once as an annotation
 * meta-annotated with its {@link Parameter}: micronaut-openapi reads a {@code @Parameter} on such
 * an annotation of a method's parameter as if it stood there. The binding ({@code @PathVariable},
 * {@code @QueryValue}) stays on the parameter.
 */
public final class ApiParameter {
  private ApiParameter() {}

  /** A run's id in the path. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.PARAMETER)
  @Parameter(
      description = "the run's id",
      schema = @Schema(type = "integer", format = "int64", minimum = "1"))
  public @interface RunId {}

  /** A target's name in the path. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.PARAMETER)
  @Parameter(
      description = "the target's name",
      schema = @Schema(pattern = "^[A-Za-z0-9._-]{1,100}$"))
  public @interface TargetName {}

  /** A webhook endpoint's id in the path. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.PARAMETER)
  @Parameter(
      description = "the webhook's id",
      schema = @Schema(type = "integer", format = "int64", minimum = "1"))
  public @interface WebhookId {}

  /** The page of a list, from 0. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.PARAMETER)
  @Parameter(
      description = "page number from 0",
      schema = @Schema(type = "integer", minimum = "0", defaultValue = "0"))
  public @interface Page {}

  /** The rows of a page of a list, 1 to 200. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.PARAMETER)
  @Parameter(
      description = "rows per page",
      schema = @Schema(type = "integer", minimum = "1", maximum = "200", defaultValue = "20"))
  public @interface PageSize {}
}

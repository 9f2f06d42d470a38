package dev.dripline.app.openapi;

import io.swagger.v3.oas.annotations.OpenAPIDefinition;
import io.swagger.v3.oas.annotations.enums.SecuritySchemeType;
import io.swagger.v3.oas.annotations.info.Info;
import io.swagger.v3.oas.annotations.security.SecurityScheme;

/**
 * The OpenAPI document's header and its security scheme; micronaut-openapi reads these, and every
 * controller's routes, at compile time. Each {@code /api} controller names {@link #BEARER} in a
 * {@code @SecurityRequirement}.
 */
@OpenAPIDefinition(
    info =
        @Info(
            title = "Dripline",
            version = "0.1.0",
            description =
                "The HTTP API of Dripline, a backfill orchestrator on Temporal. Errors are RFC 9457"
                    + " problem documents (application/problem+json) with a detail and, for"
                    + " validation, an errors array of {field, message}."))
@SecurityScheme(
    name = OpenApi.BEARER,
    type = SecuritySchemeType.HTTP,
    scheme = "bearer",
    description =
        "DRIPLINE_OPERATOR_TOKEN may do everything; DRIPLINE_VIEWER_TOKEN only GET and HEAD (any"
            + " other method: 403).")
public final class OpenApi {
  /** The name of the bearer-token security scheme. */
  public static final String BEARER = "bearer";

  private OpenApi() {}
}

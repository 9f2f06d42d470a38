package dev.dripline.app.openapi;

import dev.dripline.app.problem.NotFoundProblem;
import io.micronaut.context.annotation.Requires;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.swagger.v3.oas.annotations.Hidden;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.regex.Pattern;

/**
 * Serves the OpenAPI document micronaut-openapi generates from the controllers at compile time
 * ({@code META-INF/swagger/openapi.yml}) at {@code /openapi.yml}, and the Swagger UI page it
 * generates beside it, with its own scripts and styles, at {@code /swagger-ui} (its files under
 * {@code /swagger-ui/res/}). Both are open paths by default ({@code dripline.auth.open-paths}); the
 * page sends the token a user enters with its requests.
 */
@Hidden
@Requires(notEnv = "worker")
@Controller
public class ApiDocsController {
  /** The media type of the document (RFC 9512). */
  static final String YAML = "application/yaml";

  private static final String DOCUMENT = "META-INF/swagger/openapi.yml";
  private static final String SWAGGER_UI = "META-INF/swagger/views/swagger-ui/";

  /** A Swagger UI resource: one plain file name under {@code res/}. */
  private static final Pattern RESOURCE = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*");

  @Get(uri = "/openapi.yml", produces = YAML)
  public byte[] document() throws IOException {
    return read(DOCUMENT);
  }

  @Get(uri = "/swagger-ui", produces = MediaType.TEXT_HTML)
  public byte[] swaggerUi() throws IOException {
    return read(SWAGGER_UI + "index.html");
  }

  @Get("/swagger-ui/res/{file}")
  public HttpResponse<byte[]> swaggerUiResource(@PathVariable String file) throws IOException {
    if (!RESOURCE.matcher(file).matches()) {
      throw new NotFoundProblem("no Swagger UI resource of that name");
    }
    return HttpResponse.ok(read(SWAGGER_UI + "res/" + file))
        .contentType(MediaType.forFilename(file));
  }

  private static byte[] read(String name) throws IOException {
    URL url = ApiDocsController.class.getClassLoader().getResource(name);
    if (url == null) {
      throw new NotFoundProblem("no such resource: " + name.substring(name.lastIndexOf('/') + 1));
    }
    try (InputStream in = url.openStream()) {
      return in.readAllBytes();
    }
  }
}

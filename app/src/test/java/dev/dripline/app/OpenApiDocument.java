package dev.dripline.app;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The OpenAPI document micronaut-openapi generated from the controllers ({@code
 * META-INF/swagger/openapi.yml}, served at {@code /openapi.yml}), read as plain maps and lists.
 */
public final class OpenApiDocument {
  /** Where the build puts the document on the classpath. */
  public static final String RESOURCE = "META-INF/swagger/openapi.yml";

  private static final Set<String> METHODS =
      Set.of("get", "put", "post", "delete", "options", "head", "patch", "trace");

  private final Map<String, Object> root;

  private OpenApiDocument(Map<String, Object> root) {
    this.root = root;
  }

  /** The document as the build generated it. */
  public static OpenApiDocument fromClasspath() {
    try (InputStream in = OpenApiDocument.class.getClassLoader().getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is not on the classpath");
      }
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A document from its YAML text. */
  public static OpenApiDocument parse(String yaml) {
    return new OpenApiDocument(map(new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml)));
  }

  public Map<String, Object> root() {
    return root;
  }

  /**
   * One operation of the document.
   *
   * @param method the HTTP method, upper case
   * @param path the path template, e.g. {@code /api/runs/{id}}
   * @param spec the operation object
   */
  public record Operation(String method, String path, Map<String, Object> spec) {
    /** {@code METHOD /path}, as a route is named in failure messages. */
    public String route() {
      return method + " " + path;
    }

    /** The documented response statuses. */
    public Set<Integer> statuses() {
      Set<Integer> statuses = new TreeSet<>();
      map(spec.get("responses")).keySet().forEach(code -> statuses.add(Integer.valueOf(code)));
      return statuses;
    }

    /** The response object of a status. */
    public Map<String, Object> response(int status) {
      return map(map(spec.get("responses")).get(String.valueOf(status)));
    }

    /** The {@code $ref} of the {@code application/json} request body's schema, or null. */
    public String jsonBodyRef() {
      Object body = spec.get("requestBody");
      if (body == null) {
        return null;
      }
      Object json = map(map(body).get("content")).get("application/json");
      return json == null ? null : (String) map(map(json).get("schema")).get("$ref");
    }

    /** The names of the documented parameters that are {@code in} the given place. */
    public Set<String> parameters(String in) {
      Set<String> names = new TreeSet<>();
      Object parameters = spec.get("parameters");
      if (parameters != null) {
        for (Object parameter : (List<?>) parameters) {
          if (in.equals(map(parameter).get("in"))) {
            names.add((String) map(parameter).get("name"));
          }
        }
      }
      return names;
    }
  }

  /** Every operation, by path and method. */
  public List<Operation> operations() {
    List<Operation> operations = new ArrayList<>();
    map(root.get("paths"))
        .forEach(
            (path, item) ->
                map(item)
                    .forEach(
                        (method, operation) -> {
                          if (METHODS.contains(method)) {
                            operations.add(
                                new Operation(
                                    method.toUpperCase(Locale.ROOT), path, map(operation)));
                          }
                        }));
    return operations;
  }

  /** A schema of {@code components.schemas}, by name or by {@code #/components/schemas/} ref. */
  public Map<String, Object> schema(String nameOrRef) {
    String name = nameOrRef.substring(nameOrRef.lastIndexOf('/') + 1);
    Map<String, Object> schema = map(map(map(root.get("components")).get("schemas")).get(name));
    if (schema == null) {
      throw new IllegalArgumentException("no schema " + nameOrRef);
    }
    return schema;
  }

  @SuppressWarnings("unchecked")
  public static Map<String, Object> map(Object value) {
    return (Map<String, Object>) value;
  }
}

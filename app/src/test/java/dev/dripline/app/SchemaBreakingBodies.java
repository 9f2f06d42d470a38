package dev.dripline.app;

import dev.dripline.app.OpenApiDocument.Operation;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Request bodies generated from the OpenAPI document's schemas, each breaking one rule of one
 * property of an operation's JSON body: a value of another JSON type, a number out of its range, a
 * string too long or too short or off its pattern or format, an unknown enum value, a required
 * property missing or {@code null}, an unknown property, an array with too few items or one item
 * that breaks the items' schema. Each starts from a valid body of the operation ({@link #BASES};
 * for an operation not there, its required properties with the least values their schemas allow)
 * and changes that one property, so the API must reject it naming that property.
 *
 * <p>Paths name the fixtures of {@link HostileInputIT}: {@code {run}}, {@code {target}}; bodies
 * {@code {backfill}} and {@code {target}}. Values are JSON text.
 */
public final class SchemaBreakingBodies {
  /** A string far longer than any field takes, well under the 1 MB body limit. */
  static final int HUGE = 100_000;

  /** A valid body of each operation, by route, as JSON text per property. */
  static final Map<String, Map<String, String>> BASES =
      Map.of(
          "POST /api/runs",
          ordered("backfill", "\"{backfill}\"", "options", "{\"items\":1}"),
          "PATCH /api/runs/{id}",
          ordered("maxParallelBatches", "2"),
          "POST /api/targets",
          ordered(
              "name", "\"{target}-new\"", "backfill", "\"{backfill}\"", "options", "{\"items\":1}"),
          "POST /api/targets/{name}/live-batches",
          ordered("payload", "{}"),
          "POST /api/throttle/hold",
          ordered("reason", "\"hostile input\""),
          "PATCH /api/throttle/checks/{name}",
          ordered("threshold", "10"),
          "PUT /api/pools/{name}",
          ordered("size", "1"),
          "POST /api/webhooks",
          ordered("url", "\"http://127.0.0.1:1/hostile-input\"", "events", "[\"run.failed\"]"));

  /**
   * One generated request.
   *
   * @param route the operation, {@code METHOD /path/{template}}
   * @param method the HTTP method
   * @param path the path, with fixture placeholders
   * @param body the body, JSON text
   * @param field the property it breaks, which the 400 must name
   * @param breaks how
   */
  public record Case(
      String route, String method, String path, String body, String field, String breaks) {
    @Override
    public String toString() {
      return route + ": " + field + " " + breaks;
    }
  }

  private SchemaBreakingBodies() {}

  /** Every generated case of every operation of {@code document} that takes a JSON body. */
  public static List<Case> of(OpenApiDocument document) {
    List<Case> cases = new ArrayList<>();
    for (Operation operation : document.operations()) {
      String ref = operation.jsonBodyRef();
      if (ref != null) {
        cases.addAll(of(document, operation, document.schema(ref)));
      }
    }
    return cases;
  }

  private static List<Case> of(
      OpenApiDocument document, Operation operation, Map<String, Object> schema) {
    Map<String, Object> properties = OpenApiDocument.map(schema.get("properties"));
    List<?> required = (List<?>) schema.getOrDefault("required", List.of());
    Map<String, String> base =
        BASES.getOrDefault(operation.route(), leastValid(document, properties, required));
    String path = fixturePath(operation.path());
    List<Case> cases = new ArrayList<>();
    properties.forEach(
        (name, value) -> {
          Map<String, Object> property = resolve(document, OpenApiDocument.map(value));
          breaking(property)
              .forEach(
                  (breaks, json) -> {
                    Map<String, String> body = new LinkedHashMap<>(base);
                    body.put(name, json);
                    cases.add(
                        new Case(
                            operation.route(),
                            operation.method(),
                            path,
                            render(body),
                            name,
                            breaks));
                  });
          if (required.contains(name)) {
            Map<String, String> without = new LinkedHashMap<>(base);
            without.remove(name);
            cases.add(
                new Case(
                    operation.route(), operation.method(), path, render(without), name, "missing"));
            Map<String, String> nulled = new LinkedHashMap<>(base);
            nulled.put(name, "null");
            cases.add(
                new Case(
                    operation.route(), operation.method(), path, render(nulled), name, "null"));
          }
        });
    if (Boolean.FALSE.equals(schema.get("additionalProperties"))) {
      Map<String, String> body = new LinkedHashMap<>(base);
      body.put("hostileUnknown", "1");
      cases.add(
          new Case(
              operation.route(),
              operation.method(),
              path,
              render(body),
              "hostileUnknown",
              "unknown property"));
    }
    return cases;
  }

  /** Values that break {@code property}'s schema, by what they break. */
  static Map<String, String> breaking(Map<String, Object> property) {
    Map<String, String> values = new LinkedHashMap<>();
    String type = String.valueOf(property.get("type"));
    switch (type) {
      case "integer" -> {
        values.put("a string", "\"1\"");
        values.put("a fraction", "1.5");
        values.put("a boolean", "true");
        values.put("an object", "{}");
        bounds(property, BigDecimal.ONE, values);
        if (!property.containsKey("maximum")) {
          values.put("beyond 64 bits", "9223372036854775808");
        }
      }
      case "number" -> {
        values.put("a string", "\"1\"");
        values.put("a boolean", "true");
        values.put("an array", "[1]");
        values.put("beyond a double", "1e309");
        bounds(property, new BigDecimal("0.5"), values);
      }
      case "string" -> {
        values.put("a number", "7");
        values.put("an object", "{}");
        values.put("a boolean", "true");
        Object maxLength = property.get("maxLength");
        if (maxLength != null) {
          values.put("too long", quoted("x".repeat(((Number) maxLength).intValue() + 1)));
        }
        Object minLength = property.get("minLength");
        if (minLength != null && ((Number) minLength).intValue() > 0) {
          values.put("too short", quoted("x".repeat(((Number) minLength).intValue() - 1)));
        }
        values.put("huge", quoted("x".repeat(HUGE)));
        if (property.containsKey("pattern")) {
          values.put("off its pattern", "\"not a name!\"");
        }
        if ("date-time".equals(property.get("format"))) {
          values.put("not a date-time", "\"yesterday\"");
        }
        if ("duration".equals(property.get("format"))) {
          values.put("not a duration", "\"soon\"");
        }
        if (property.containsKey("enum")) {
          values.put("an unknown enum value", "\"no-such-value\"");
        }
      }
      case "object" -> {
        values.put("an array", "[1]");
        values.put("a string", "\"x\"");
        values.put("a number", "7");
      }
      case "boolean" -> {
        values.put("a string", "\"true\"");
        values.put("a number", "1");
      }
      case "array" -> {
        values.put("an object", "{}");
        values.put("a string", "\"x\"");
        Object minItems = property.get("minItems");
        if (minItems != null && ((Number) minItems).intValue() > 0) {
          values.put("too few items", "[]");
        }
        if (property.get("items") instanceof Map<?, ?> items && items.containsKey("type")) {
          breaking(OpenApiDocument.map(items))
              .forEach((breaks, json) -> values.put("an item " + breaks, "[" + json + "]"));
        }
      }
      default -> throw new IllegalArgumentException("a property of no known type: " + property);
    }
    return values;
  }

  private static void bounds(
      Map<String, Object> property, BigDecimal step, Map<String, String> values) {
    Object minimum = property.get("minimum");
    if (minimum != null) {
      values.put("below its minimum", new BigDecimal(minimum.toString()).subtract(step).toString());
    }
    Object maximum = property.get("maximum");
    if (maximum != null) {
      values.put("above its maximum", new BigDecimal(maximum.toString()).add(step).toString());
    }
  }

  /**
   * A property's schema, and its items' if it is an array, through a {@code $ref} if it has one.
   */
  private static Map<String, Object> resolve(
      OpenApiDocument document, Map<String, Object> property) {
    if (property.get("$ref") instanceof String ref) {
      return document.schema(ref);
    }
    if (property.get("items") instanceof Map<?, ?> items && items.get("$ref") instanceof String) {
      Map<String, Object> resolved = new LinkedHashMap<>(property);
      resolved.put("items", resolve(document, OpenApiDocument.map(items)));
      return resolved;
    }
    return property;
  }

  /** The required properties with the least values their schemas allow. */
  private static Map<String, String> leastValid(
      OpenApiDocument document, Map<String, Object> properties, List<?> required) {
    Map<String, String> body = new LinkedHashMap<>();
    for (Object name : required) {
      Map<String, Object> property =
          resolve(document, OpenApiDocument.map(properties.get((String) name)));
      Object minimum = property.getOrDefault("minimum", 1);
      body.put(
          (String) name,
          switch (String.valueOf(property.get("type"))) {
            case "integer", "number" -> minimum.toString();
            case "boolean" -> "false";
            case "object" -> "{}";
            case "array" -> "[]";
            default -> "\"hostile-input\"";
          });
    }
    return body;
  }

  /** The path with HostileInputIT's fixtures for runs and targets, a name for anything else. */
  static String fixturePath(String template) {
    if (template.startsWith("/api/runs/")) {
      template = template.replace("{id}", "{run}");
    } else if (template.startsWith("/api/targets/")) {
      template = template.replace("{name}", "{target}");
    }
    return template.replaceAll("\\{(?!run}|target})[^}]+}", "hostile-input");
  }

  private static String render(Map<String, String> body) {
    return body.entrySet().stream()
        .map(entry -> quoted(entry.getKey()) + ":" + entry.getValue())
        .collect(Collectors.joining(",", "{", "}"));
  }

  private static String quoted(String text) {
    return "\"" + text + "\"";
  }

  private static Map<String, String> ordered(String... namesAndValues) {
    Map<String, String> body = new LinkedHashMap<>();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      body.put(namesAndValues[i], namesAndValues[i + 1]);
    }
    return body;
  }
}

package dev.dripline.app.request;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.store.catalogue.FieldError;
import io.micronaut.jackson.core.tree.JsonNodeTreeCodec;
import io.micronaut.json.tree.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads a request body that must be exactly one JSON object, more strictly than Micronaut's own
 * body binding does: a field given twice, anything after the object, or a string (key or value)
 * that PostgreSQL cannot store is a 400. Each of these is thrown as a {@link ValidationProblem}
 * against the field {@code body} (or, for an unstorable string, against the string's own field),
 * before any field is bound.
 */
final class JsonObjectBody {
  /**
   * Rejects a field given twice: which one counts would be up to whichever parser reads it
   * (Micronaut Serialization keeps one silently), so the rule needs Jackson's own duplicate
   * detection.
   */
  private static final JsonFactory JSON =
      JsonFactory.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  static final String UNSTORABLE =
      "must not contain the NUL character (\\u0000) or an unpaired surrogate";

  private JsonObjectBody() {}

  /** The body as a JSON tree whose root is an object; anything else is thrown. */
  static JsonNode parse(String body) {
    if (body == null || body.isBlank()) {
      throw ValidationProblem.of("body", "is required: a JSON object");
    }
    JsonNode root;
    JsonLocation more = null;
    try (JsonParser parser = JSON.createParser(body)) {
      root = JsonNodeTreeCodec.getInstance().readTree(parser);
      if (parser.nextToken() != null) {
        more = parser.currentTokenLocation();
      }
    } catch (JsonProcessingException e) {
      String reason = e.getOriginalMessage();
      String duplicate =
          reason != null && reason.startsWith("Duplicate field ")
              ? ": d" + reason.substring(1)
              : "";
      throw ValidationProblem.of("body", "is not valid JSON" + duplicate + at(e.getLocation()));
    } catch (IOException | RuntimeException e) {
      throw ValidationProblem.of("body", "is not valid JSON");
    }
    if (more != null) {
      throw ValidationProblem.of(
          "body", "is not valid JSON: more follows the first value" + at(more));
    }
    if (root == null || !root.isObject()) {
      throw ValidationProblem.of("body", "must be a JSON object");
    }
    List<FieldError> errors = new ArrayList<>();
    unstorable(root, "", errors);
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    return root;
  }

  /** Whether PostgreSQL can store {@code text}: no NUL, and valid UTF-16 (so valid UTF-8). */
  static boolean storable(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == 0) {
        return false;
      }
      if (Character.isHighSurrogate(c)) {
        if (i + 1 == text.length() || !Character.isLowSurrogate(text.charAt(i + 1))) {
          return false;
        }
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return false;
      }
    }
    return true;
  }

  private static String at(JsonLocation location) {
    if (location == null || location.getLineNr() < 1) {
      return "";
    }
    return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
  }

  /**
   * Adds an error for every string under {@code node} that PostgreSQL cannot store. The whole tree
   * is walked, free-form options and payloads included, so a record's constraints cannot express
   * it.
   */
  private static void unstorable(JsonNode node, String path, List<FieldError> errors) {
    if (node.isObject()) {
      for (Map.Entry<String, JsonNode> entry : node.entries()) {
        String field = path.isEmpty() ? entry.getKey() : path + "." + entry.getKey();
        if (!storable(entry.getKey())) {
          errors.add(new FieldError(field, "has a name that " + UNSTORABLE));
        } else {
          unstorable(entry.getValue(), field, errors);
        }
      }
    } else if (node.isArray()) {
      int index = 0;
      for (JsonNode value : node.values()) {
        unstorable(value, path + "[" + index++ + "]", errors);
      }
    } else if (node.isString() && !storable(node.getStringValue())) {
      errors.add(new FieldError(path, UNSTORABLE));
    }
  }
}

package dev.dripline.app.request;

import dev.dripline.store.catalogue.FieldError;
import io.micronaut.core.beans.BeanIntrospection;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import io.micronaut.json.tree.JsonNode;
import jakarta.inject.Singleton;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Path;
import jakarta.validation.Validator;
import jakarta.validation.constraints.NotNull;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Binds a JSON request body to a {@code @Serdeable} record and checks the record's {@code
 * jakarta.validation} constraints, reporting one {@link FieldError} per bad field instead of
 * failing the whole body at its first problem. The body is read strictly first ({@link
 * JsonObjectBody}: one object, no duplicate fields, storable strings). Then:
 *
 * <ul>
 *   <li>a field that is not one of the record's components is an error of its own;
 *   <li>each component is decoded by Micronaut Serialization from its own field, so a wrong type is
 *       an error of that field alone ({@link #decode}); an absent or {@code null} field is {@code
 *       null};
 *   <li>the record's constraints are checked by the validator; a field keeps only its first error.
 * </ul>
 *
 * <p>Controllers call this rather than binding {@code @Valid @Body} records because that binding
 * fails the whole body at its first wrong type (or coerces it, see {@link #decode}), cannot tell a
 * duplicate field, and would answer before the service adds the catalogue's errors, where the API
 * reports every bad field of a request in one 400 (spec R1).
 */
@Singleton
public class BodyReader {
  private static final String INSTANT = "must be an ISO-8601 instant such as 2026-01-31T12:00:00Z";

  private final JsonMapper json;
  private final Validator validator;

  public BodyReader(JsonMapper json, Validator validator) {
    this.json = json;
    this.validator = validator;
  }

  /**
   * Reads {@code body} into a {@code type}; a body that is not a single, storable JSON object is
   * thrown as a {@link dev.dripline.app.problem.ValidationProblem}.
   */
  public <T> BoundBody<T> read(String body, Class<T> type) {
    JsonNode root = JsonObjectBody.parse(body);
    BeanIntrospection<T> introspection = BeanIntrospection.getIntrospection(type);
    Argument<?>[] fields = introspection.getConstructorArguments();
    Set<String> known = new TreeSet<>();
    Arrays.stream(fields).forEach(field -> known.add(field.getName()));
    List<FieldError> errors = new ArrayList<>();
    for (Map.Entry<String, JsonNode> entry : root.entries()) {
      if (!known.contains(entry.getKey())) {
        errors.add(new FieldError(entry.getKey(), "unknown field; known fields: " + known));
      }
    }
    Object[] values = new Object[fields.length];
    Map<String, String> wrongTypes = new HashMap<>();
    for (int i = 0; i < fields.length; i++) {
      JsonNode node = root.get(fields[i].getName());
      if (node != null && !node.isNull()) {
        try {
          values[i] = decode(node, fields[i]);
        } catch (WrongType e) {
          wrongTypes.put(fields[i].getName(), e.getMessage());
        }
      }
    }
    T bound = introspection.instantiate(false, values);
    Map<String, String> violations = new HashMap<>();
    validator.validate(bound).stream()
        .sorted(FIRST_ERROR)
        .forEach(
            violation ->
                violations.putIfAbsent(field(violation.getPropertyPath()), violation.getMessage()));
    if (wrongTypes.isEmpty() && violations.isEmpty()) {
      return new BoundBody<>(bound, errors);
    }
    for (int i = 0; i < fields.length; i++) {
      String name = fields[i].getName();
      // A mistyped field is null in the record: its type error is its error, not "is required".
      String message = wrongTypes.getOrDefault(name, violations.get(name));
      if (message != null) {
        errors.add(new FieldError(name, message));
        values[i] = null;
      }
    }
    // Every rejected field null, so nothing checks its value further (a blank backfill is not
    // also looked up in the catalogue).
    return new BoundBody<>(introspection.instantiate(false, values), errors);
  }

  /**
   * Which of a field's violations is its error: that it is required, if it is missing (a missing
   * field also fails {@code @NotBlank} and the like); otherwise the records are written so that a
   * present value fails at most one constraint, and the message order only keeps the choice stable.
   */
  private static final Comparator<ConstraintViolation<?>> FIRST_ERROR =
      Comparator.<ConstraintViolation<?>, Boolean>comparing(
              violation ->
                  violation.getConstraintDescriptor().getAnnotation().annotationType()
                      != NotNull.class)
          .thenComparing(ConstraintViolation::getMessage);

  private static boolean allStrings(JsonNode array) {
    for (JsonNode value : array.values()) {
      if (!value.isString()) {
        return false;
      }
    }
    return true;
  }

  private static String field(Path path) {
    return path.iterator().next().getName();
  }

  /**
   * Decodes one field into its component's type, accepting only the JSON type the component stands
   * for. Micronaut Serialization alone would coerce — {@code "10"} or {@code true} into a number,
   * {@code 1.5} into 1, {@code [1]} or {@code 7} into a string, {@code 5} or {@code "5"} into an
   * instant — where the API rejects the value against its field, so the JSON type is checked here
   * first: a string for {@code String}, an ISO-8601 string for {@link Instant}, a whole number
   * within range for {@code Long}, a finite number for {@code Double}, an array of strings for a
   * {@code List}, an object for a {@code Map} or a {@link JsonNode} (which keeps a free-form object
   * as it was sent).
   */
  private Object decode(JsonNode node, Argument<?> field) throws WrongType {
    Class<?> type = field.getType();
    if (type == String.class) {
      expect(node.isString(), "must be a string");
    } else if (type == Instant.class) {
      expect(node.isString(), INSTANT);
      return instant(node.getStringValue());
    } else if (type == Long.class) {
      expect(node.isNumber(), "must be an integer");
      BigDecimal value;
      try {
        value = new BigDecimal(node.getNumberValue().toString());
      } catch (NumberFormatException e) {
        // 1e309 and the like: beyond a double, read as infinity.
        throw new WrongType("is out of range");
      }
      expect(value.stripTrailingZeros().scale() <= 0, "must be an integer");
      expect(value.toBigInteger().bitLength() < Long.SIZE, "is out of range");
    } else if (type == Double.class) {
      expect(node.isNumber(), "must be a number");
      double value = node.getNumberValue().doubleValue();
      expect(Double.isFinite(value), "is out of range");
      return value;
    } else if (type == JsonNode.class) {
      expect(node.isObject(), "must be a JSON object");
      return node;
    } else if (Map.class.isAssignableFrom(type)) {
      expect(node.isObject(), "must be a JSON object");
    } else if (List.class.isAssignableFrom(type)) {
      expect(node.isArray() && allStrings(node), "must be an array of strings");
    } else {
      throw new IllegalArgumentException("no JSON type is defined for a " + type.getName());
    }
    try {
      return json.readValueFromTree(node, field);
    } catch (IOException | RuntimeException e) {
      // The types are checked above; the decoder's own message would name Java types, not fields.
      throw new WrongType("has an unreadable value");
    }
  }

  /**
   * An ISO-8601 instant with its offset. Parsed here, not by Micronaut Serialization, which also
   * reads a string of digits as seconds since the epoch.
   */
  private static Instant instant(String text) throws WrongType {
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException e) {
      try {
        return Instant.parse(text);
      } catch (DateTimeParseException again) {
        throw new WrongType(INSTANT);
      }
    }
  }

  private static void expect(boolean condition, String message) throws WrongType {
    if (!condition) {
      throw new WrongType(message);
    }
  }

  /** A field's value is not of the JSON type its component stands for. */
  private static final class WrongType extends Exception {
    private static final long serialVersionUID = 1L;

    WrongType(String message) {
      super(message, null, false, false);
    }
  }
}

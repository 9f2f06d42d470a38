package dev.dripline.app.run;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.catalogue.FieldError;
import dev.dripline.run.BatchStatus;
import dev.dripline.run.RunStatus;
import io.micronaut.jackson.core.tree.JsonNodeTreeCodec;
import io.micronaut.json.tree.JsonNode;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads request bodies and query parameters of the runs API into typed values, one {@link
 * FieldError} per bad field. Bodies are read as JSON trees rather than bound to records so that a
 * wrong type or an unknown field is reported against its field instead of failing the whole body.
 * Unknown query parameters are rejected like unknown fields, so a misspelt filter or a paging
 * scheme the API does not have ({@code limit}, {@code cursor}) is not silently ignored.
 */
@Singleton
public class RunRequests {
  static final int DEFAULT_PAGE_SIZE = 20;
  static final int MAX_PAGE_SIZE = 200;

  private static final Set<String> CREATE_FIELDS =
      Set.of("backfill", "options", "batchSize", "maxRecords", "maxParallelBatches", "startAt");
  private static final Set<String> PATCH_FIELDS = Set.of("maxParallelBatches");
  private static final Set<String> LIST_PARAMETERS = Set.of("status", "backfill", "page", "size");
  private static final Set<String> BATCH_PARAMETERS = Set.of("status", "page", "size");

  /** Idempotency keys are unique-indexed; a btree entry holds at most about 2.7 kB. */
  static final int MAX_IDEMPOTENCY_KEY_LENGTH = 255;

  /**
   * The range of {@code startAt}: PostgreSQL's {@code timestamptz} and Temporal's timers hold far
   * less than {@link Instant} does, and a start before 1970 only means "now" anyway.
   */
  static final Instant EARLIEST_START = Instant.EPOCH;

  static final Instant LATEST_START =
      OffsetDateTime.of(9999, 12, 31, 23, 59, 59, 0, ZoneOffset.UTC).toInstant();

  /** Rejects a field given twice: which one counts would be up to whichever parser reads it. */
  private static final JsonFactory JSON =
      JsonFactory.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  private static final String UNSTORABLE =
      "must not contain the NUL character (\\u0000) or an unpaired surrogate";

  /**
   * Reads a {@code POST /api/runs} body and its {@code Idempotency-Key} header; only a body that is
   * not a JSON object is thrown.
   */
  CreateRunRequest create(String body, String idempotencyKey) {
    JsonNode root = object(body);
    List<FieldError> errors = new ArrayList<>();
    if (idempotencyKey != null
        && (idempotencyKey.isBlank() || idempotencyKey.length() > MAX_IDEMPOTENCY_KEY_LENGTH)) {
      errors.add(
          new FieldError(
              "Idempotency-Key",
              "must be 1 to " + MAX_IDEMPOTENCY_KEY_LENGTH + " characters, not blank"));
    }
    unknownFields(root, CREATE_FIELDS, errors);
    String backfill = null;
    JsonNode backfillNode = root.get("backfill");
    if (absent(backfillNode)) {
      errors.add(new FieldError("backfill", "is required"));
    } else if (!backfillNode.isString() || backfillNode.getStringValue().isBlank()) {
      errors.add(new FieldError("backfill", "must be a backfill name"));
    } else {
      backfill = backfillNode.getStringValue();
    }
    Map<String, Object> options = Map.of();
    JsonNode optionsNode = root.get("options");
    if (!absent(optionsNode)) {
      if (optionsNode.isObject()) {
        options = plainObject(optionsNode);
      } else {
        options = null;
        errors.add(new FieldError("options", "must be a JSON object"));
      }
    }
    Long batchSize = positive(root, "batchSize", Integer.MAX_VALUE, errors);
    Long maxRecords = positive(root, "maxRecords", Long.MAX_VALUE, errors);
    Long maxParallel = positive(root, "maxParallelBatches", Integer.MAX_VALUE, errors);
    Instant startAt = instant(root, "startAt", errors);
    return new CreateRunRequest(
        backfill,
        options,
        batchSize == null ? null : batchSize.intValue(),
        maxRecords,
        maxParallel == null ? null : maxParallel.intValue(),
        startAt,
        List.copyOf(errors));
  }

  /** Reads a {@code PATCH /api/runs/{id}} body: the new requested cap. */
  int capChange(String body) {
    JsonNode root = object(body);
    List<FieldError> errors = new ArrayList<>();
    unknownFields(root, PATCH_FIELDS, errors);
    Long cap = positive(root, "maxParallelBatches", Integer.MAX_VALUE, errors);
    if (cap == null && errors.stream().noneMatch(e -> e.field().equals("maxParallelBatches"))) {
      errors.add(new FieldError("maxParallelBatches", "is required"));
    }
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    return cap.intValue();
  }

  /**
   * Reads the filters and paging of {@code GET /api/runs}.
   *
   * @param parameters the names of all query parameters given
   */
  RunQuery runQuery(
      Collection<String> parameters, String status, String backfill, String page, String size) {
    List<FieldError> errors = new ArrayList<>();
    unknownParameters(parameters, LIST_PARAMETERS, errors);
    storable("backfill", backfill, errors);
    RunStatus runStatus = null;
    if (status != null && !status.isBlank()) {
      try {
        runStatus = RunStatus.fromWire(status);
      } catch (IllegalArgumentException e) {
        errors.add(new FieldError("status", "must be one of " + wires(RunStatus.values())));
      }
    }
    PageRequest paging = paging(page, size, errors);
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    return new RunQuery(
        runStatus, backfill == null || backfill.isBlank() ? null : backfill, paging);
  }

  /**
   * Reads the filter and paging of {@code GET /api/runs/{id}/batches}.
   *
   * @param parameters the names of all query parameters given
   */
  BatchQuery batchQuery(Collection<String> parameters, String status, String page, String size) {
    List<FieldError> errors = new ArrayList<>();
    unknownParameters(parameters, BATCH_PARAMETERS, errors);
    BatchStatus batchStatus = null;
    if (status != null && !status.isBlank()) {
      try {
        batchStatus = BatchStatus.fromWire(status);
      } catch (IllegalArgumentException e) {
        errors.add(new FieldError("status", "must be one of " + wires(BatchStatus.values())));
      }
    }
    PageRequest paging = paging(page, size, errors);
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    return new BatchQuery(batchStatus, paging);
  }

  /** A run id from a path; anything that is not one names no run. */
  static OptionalLong runId(String text) {
    try {
      long id = Long.parseLong(text);
      return id > 0 ? OptionalLong.of(id) : OptionalLong.empty();
    } catch (NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * Reads {@code page} (0-based, default 0) and {@code size} (1 to 200, default 20) query
   * parameters; also used by the targets API so every listing pages alike.
   *
   * @return the page asked for, or {@code null} if a parameter was rejected into {@code errors}
   */
  public static PageRequest paging(String page, String size, List<FieldError> errors) {
    Integer pageNumber = queryInt("page", page, 0, 0, Integer.MAX_VALUE, errors);
    Integer pageSize = queryInt("size", size, DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE, errors);
    return pageNumber == null || pageSize == null ? null : new PageRequest(pageNumber, pageSize);
  }

  private static Integer queryInt(
      String field, String text, int fallback, int min, int max, List<FieldError> errors) {
    if (text == null || text.isBlank()) {
      return fallback;
    }
    try {
      int value = Integer.parseInt(text.trim());
      if (value >= min && value <= max) {
        return value;
      }
    } catch (NumberFormatException e) {
      // reported below, like an out-of-range value
    }
    String range = max == Integer.MAX_VALUE ? "at least " + min : "between " + min + " and " + max;
    errors.add(new FieldError(field, "must be an integer " + range));
    return null;
  }

  /**
   * Reads a request body that must be a single JSON object; anything else is thrown as a 400
   * against the field {@code body}. So is a string anywhere in it (key or value) that PostgreSQL
   * cannot store: one with the NUL character or an unpaired surrogate, thrown against its own
   * field. Shared with the targets API.
   */
  public static JsonNode object(String body) {
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

  private static String at(JsonLocation location) {
    if (location == null || location.getLineNr() < 1) {
      return "";
    }
    return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
  }

  /** Adds an error for every string under {@code node} that PostgreSQL cannot store. */
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

  /** Adds an error if a query parameter's value cannot be compared with text in PostgreSQL. */
  public static void storable(String field, String value, List<FieldError> errors) {
    if (value != null && !storable(value)) {
      errors.add(new FieldError(field, UNSTORABLE));
    }
  }

  /** Whether PostgreSQL can store {@code text}: no NUL, and valid UTF-16 (so valid UTF-8). */
  private static boolean storable(String text) {
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

  /** Adds an error for every query parameter that is not in {@code known}. */
  public static void unknownParameters(
      Collection<String> parameters, Set<String> known, List<FieldError> errors) {
    for (String name : parameters) {
      if (!known.contains(name)) {
        errors.add(
            new FieldError(
                name, "unknown query parameter; known parameters: " + new TreeSet<>(known)));
      }
    }
  }

  /** Adds an error for every field of {@code root} that is not in {@code known}. */
  public static void unknownFields(JsonNode root, Set<String> known, List<FieldError> errors) {
    for (Map.Entry<String, JsonNode> entry : root.entries()) {
      if (!known.contains(entry.getKey())) {
        errors.add(
            new FieldError(entry.getKey(), "unknown field; known fields: " + new TreeSet<>(known)));
      }
    }
  }

  /** Whether a field is missing or JSON {@code null}. */
  public static boolean absent(JsonNode node) {
    return node == null || node.isNull();
  }

  /** An optional whole number of at least 1 and at most {@code max}; null if absent or bad. */
  private static Long positive(JsonNode root, String field, long max, List<FieldError> errors) {
    JsonNode node = root.get(field);
    if (absent(node)) {
      return null;
    }
    if (!node.isNumber()) {
      errors.add(new FieldError(field, "must be an integer"));
      return null;
    }
    BigDecimal value;
    try {
      value = new BigDecimal(node.getNumberValue().toString());
    } catch (NumberFormatException e) {
      // 1e309 and the like: beyond a double, read as infinity.
      errors.add(new FieldError(field, "must be an integer from 1 to " + max));
      return null;
    }
    if (value.stripTrailingZeros().scale() > 0) {
      errors.add(new FieldError(field, "must be an integer"));
      return null;
    }
    if (value.compareTo(BigDecimal.ONE) < 0) {
      errors.add(new FieldError(field, "must be at least 1"));
      return null;
    }
    if (value.compareTo(BigDecimal.valueOf(max)) > 0) {
      errors.add(new FieldError(field, "must be at most " + max));
      return null;
    }
    return value.longValueExact();
  }

  private static Instant instant(JsonNode root, String field, List<FieldError> errors) {
    JsonNode node = root.get(field);
    if (absent(node)) {
      return null;
    }
    String message = "must be an ISO-8601 instant such as 2026-01-31T12:00:00Z";
    if (!node.isString()) {
      errors.add(new FieldError(field, message));
      return null;
    }
    String text = node.getStringValue();
    Instant value;
    try {
      value = OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException e) {
      try {
        value = Instant.parse(text);
      } catch (DateTimeParseException again) {
        errors.add(new FieldError(field, message));
        return null;
      }
    }
    if (value.isBefore(EARLIEST_START) || value.isAfter(LATEST_START)) {
      errors.add(
          new FieldError(field, "must be between " + EARLIEST_START + " and " + LATEST_START));
      return null;
    }
    return value;
  }

  /** A JSON object as plain Java values, the form {@code OptionsValidator} expects. */
  public static Map<String, Object> plainObject(JsonNode node) {
    Map<String, Object> values = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> entry : node.entries()) {
      values.put(entry.getKey(), plain(entry.getValue()));
    }
    return values;
  }

  private static Object plain(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    if (node.isObject()) {
      return plainObject(node);
    }
    if (node.isArray()) {
      List<Object> values = new ArrayList<>();
      for (JsonNode value : node.values()) {
        values.add(plain(value));
      }
      return values;
    }
    if (node.isNumber()) {
      return node.getNumberValue();
    }
    if (node.isBoolean()) {
      return node.getBooleanValue();
    }
    return node.getStringValue();
  }

  private static String wires(Enum<?>[] values) {
    return Arrays.stream(values).map(v -> v.name().toLowerCase(Locale.ROOT)).toList().toString();
  }
}

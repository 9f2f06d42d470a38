package dev.dripline.app.run;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.catalogue.FieldError;
import dev.dripline.run.BatchStatus;
import dev.dripline.run.RunStatus;
import io.micronaut.json.JsonMapper;
import io.micronaut.json.tree.JsonNode;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
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
 */
@Singleton
public class RunRequests {
  static final int DEFAULT_PAGE_SIZE = 20;
  static final int MAX_PAGE_SIZE = 200;

  private static final Set<String> CREATE_FIELDS =
      Set.of("backfill", "options", "batchSize", "maxRecords", "maxParallelBatches", "startAt");
  private static final Set<String> PATCH_FIELDS = Set.of("maxParallelBatches");

  private final JsonMapper json;

  public RunRequests(JsonMapper json) {
    this.json = json;
  }

  /** Reads a {@code POST /api/runs} body; only a body that is not a JSON object is thrown. */
  CreateRunRequest create(String body) {
    JsonNode root = object(body);
    List<FieldError> errors = new ArrayList<>();
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

  /** Reads the filters and paging of {@code GET /api/runs}. */
  RunQuery runQuery(String status, String backfill, String page, String size) {
    List<FieldError> errors = new ArrayList<>();
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

  /** Reads the filter and paging of {@code GET /api/runs/{id}/batches}. */
  BatchQuery batchQuery(String status, String page, String size) {
    List<FieldError> errors = new ArrayList<>();
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

  private JsonNode object(String body) {
    return object(json, body);
  }

  /**
   * Reads a request body that must be a JSON object; anything else is thrown as a 400 against the
   * field {@code body}. Shared with the targets API.
   */
  public static JsonNode object(JsonMapper json, String body) {
    if (body == null || body.isBlank()) {
      throw ValidationProblem.of("body", "is required: a JSON object");
    }
    JsonNode root;
    try {
      root = json.readValue(body, JsonNode.class);
    } catch (IOException | RuntimeException e) {
      throw ValidationProblem.of("body", "is not valid JSON");
    }
    if (root == null || !root.isObject()) {
      throw ValidationProblem.of("body", "must be a JSON object");
    }
    return root;
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
    BigDecimal value = new BigDecimal(node.getNumberValue().toString());
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
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException e) {
      try {
        return Instant.parse(text);
      } catch (DateTimeParseException again) {
        errors.add(new FieldError(field, message));
        return null;
      }
    }
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

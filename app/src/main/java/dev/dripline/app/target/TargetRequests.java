package dev.dripline.app.target;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.run.PageRequest;
import dev.dripline.app.run.RunRequests;
import dev.dripline.catalogue.FieldError;
import dev.dripline.target.TargetState;
import io.micronaut.json.JsonMapper;
import io.micronaut.json.tree.JsonNode;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads request bodies and query parameters of the targets API into typed values, one {@link
 * FieldError} per bad field, the same way {@link RunRequests} does for runs (whose JSON and paging
 * helpers it shares).
 */
@Singleton
public class TargetRequests {
  /** Names of targets and groups: they end up in workflow ids, metric labels and URLs. */
  static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,100}");

  private static final String NAME_RULE = "must be 1 to 100 letters, digits, '.', '_' or '-'";
  private static final Set<String> CREATE_FIELDS = Set.of("name", "backfill", "options", "group");
  private static final Set<String> LIVE_BATCH_FIELDS = Set.of("payload");
  private static final Set<String> LIST_PARAMETERS = Set.of("state", "group", "page", "size");
  private static final Set<String> REPLAN_PARAMETERS = Set.of("dryRun");

  private final JsonMapper json;

  public TargetRequests(JsonMapper json) {
    this.json = json;
  }

  /** Reads a {@code POST /api/targets} body; only a body that is not a JSON object is thrown. */
  CreateTargetRequest create(String body) {
    JsonNode root = RunRequests.object(body);
    List<FieldError> errors = new ArrayList<>();
    RunRequests.unknownFields(root, CREATE_FIELDS, errors);
    String name = name(root, "name", true, errors);
    String backfill = null;
    JsonNode backfillNode = root.get("backfill");
    if (RunRequests.absent(backfillNode)) {
      errors.add(new FieldError("backfill", "is required"));
    } else if (!backfillNode.isString() || backfillNode.getStringValue().isBlank()) {
      errors.add(new FieldError("backfill", "must be a backfill name"));
    } else {
      backfill = backfillNode.getStringValue();
    }
    Map<String, Object> options = Map.of();
    JsonNode optionsNode = root.get("options");
    if (!RunRequests.absent(optionsNode)) {
      if (optionsNode.isObject()) {
        options = RunRequests.plainObject(optionsNode);
      } else {
        options = null;
        errors.add(new FieldError("options", "must be a JSON object"));
      }
    }
    String group = name(root, "group", false, errors);
    return new CreateTargetRequest(name, backfill, options, group, List.copyOf(errors));
  }

  /**
   * Reads a {@code POST /api/targets/{name}/live-batches} body.
   *
   * @return the payload as JSON text
   */
  String liveBatchPayload(String body) {
    JsonNode root = RunRequests.object(body);
    List<FieldError> errors = new ArrayList<>();
    RunRequests.unknownFields(root, LIVE_BATCH_FIELDS, errors);
    JsonNode payload = root.get("payload");
    if (RunRequests.absent(payload)) {
      errors.add(new FieldError("payload", "is required: a JSON object"));
    } else if (!payload.isObject()) {
      errors.add(new FieldError("payload", "must be a JSON object"));
    }
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    try {
      return json.writeValueAsString(payload);
    } catch (IOException e) {
      throw new UncheckedIOException("could not write back a parsed payload", e);
    }
  }

  /**
   * Reads the filters and paging of {@code GET /api/targets}.
   *
   * @param parameters the names of all query parameters given
   */
  TargetQuery targetQuery(
      Collection<String> parameters, String state, String group, String page, String size) {
    List<FieldError> errors = new ArrayList<>();
    RunRequests.unknownParameters(parameters, LIST_PARAMETERS, errors);
    RunRequests.storable("group", group, errors);
    TargetState targetState = null;
    if (state != null && !state.isBlank()) {
      try {
        targetState = TargetState.fromWire(state.trim());
      } catch (IllegalArgumentException e) {
        errors.add(
            new FieldError(
                "state",
                "must be one of "
                    + Arrays.stream(TargetState.values()).map(TargetState::wire).toList()));
      }
    }
    PageRequest paging = RunRequests.paging(page, size, errors);
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    return new TargetQuery(targetState, group == null || group.isBlank() ? null : group, paging);
  }

  /**
   * Whether {@code dryRun} asks for a dry run: {@code true} (any case) does, absent does not.
   *
   * @param parameters the names of all query parameters given
   */
  static boolean dryRun(Collection<String> parameters, String value) {
    List<FieldError> errors = new ArrayList<>();
    RunRequests.unknownParameters(parameters, REPLAN_PARAMETERS, errors);
    boolean dryRun = value != null && value.equalsIgnoreCase("true");
    if (!dryRun && value != null && !value.isBlank() && !value.equalsIgnoreCase("false")) {
      errors.add(new FieldError("dryRun", "must be true or false"));
    }
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    return dryRun;
  }

  /**
   * A target name from a path; anything that is not one names no target, and is not looked up (a
   * NUL, for one, cannot even be compared with text in PostgreSQL).
   */
  static Optional<String> targetName(String text) {
    return NAME.matcher(text).matches() ? Optional.of(text) : Optional.empty();
  }

  private static String name(
      JsonNode root, String field, boolean required, List<FieldError> errors) {
    JsonNode node = root.get(field);
    if (RunRequests.absent(node)) {
      if (required) {
        errors.add(new FieldError(field, "is required"));
      }
      return null;
    }
    if (!node.isString() || !NAME.matcher(node.getStringValue()).matches()) {
      errors.add(new FieldError(field, NAME_RULE));
      return null;
    }
    return node.getStringValue();
  }
}

package dev.dripline.app.targets;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.request.BodyReader;
import dev.dripline.app.request.BoundBody;
import dev.dripline.app.request.QueryParameters;
import dev.dripline.app.run.PageRequest;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.workflows.targets.TargetState;
import io.micronaut.json.JsonMapper;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads request bodies and query parameters of the targets API into typed values, one {@link
 * FieldError} per bad field: bodies are bound to their records by {@link BodyReader}, query
 * parameters follow {@link QueryParameters}.
 */
@Singleton
public class TargetRequests {
  /** Names of targets and groups: they end up in workflow ids, metric labels and URLs. */
  static final String NAME_PATTERN = "^[A-Za-z0-9._-]{1,100}$";

  static final String NAME_RULE = "must be 1 to 100 letters, digits, '.', '_' or '-'";

  private static final Pattern NAME = Pattern.compile(NAME_PATTERN);
  private static final Set<String> LIST_PARAMETERS = Set.of("state", "group", "page", "size");
  private static final Set<String> REPLAN_PARAMETERS = Set.of("dryRun");

  private final BodyReader bodies;
  private final JsonMapper json;

  public TargetRequests(BodyReader bodies, JsonMapper json) {
    this.bodies = bodies;
    this.json = json;
  }

  /** Reads a {@code POST /api/targets} body; only a body that is not a JSON object is thrown. */
  BoundBody<CreateTargetRequest> create(String body) {
    return bodies.read(body, CreateTargetRequest.class);
  }

  /**
   * Reads a {@code POST /api/targets/{name}/live-batches} body.
   *
   * @return the payload as JSON text
   */
  String liveBatchPayload(String body) {
    BoundBody<LiveBatchRequest> request = bodies.read(body, LiveBatchRequest.class);
    if (!request.errors().isEmpty()) {
      throw new ValidationProblem(request.errors());
    }
    try {
      return json.writeValueAsString(request.body().payload());
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
    QueryParameters.unknown(parameters, LIST_PARAMETERS, errors);
    QueryParameters.storable("group", group, errors);
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
    PageRequest paging = QueryParameters.paging(page, size, errors);
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
    QueryParameters.unknown(parameters, REPLAN_PARAMETERS, errors);
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
}

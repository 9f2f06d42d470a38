package dev.dripline.app.run;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.request.BodyReader;
import dev.dripline.app.request.BoundBody;
import dev.dripline.app.request.QueryParameters;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.workflows.run.BatchStatus;
import dev.dripline.workflows.run.RunStatus;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Reads request bodies, headers and query parameters of the runs API into typed values, one {@link
 * FieldError} per bad field. Bodies are bound to their records by {@link BodyReader}; query
 * parameters follow {@link QueryParameters}.
 */
@Singleton
public class RunRequests {
  private static final Set<String> LIST_PARAMETERS = Set.of("status", "backfill", "page", "size");
  private static final Set<String> BATCH_PARAMETERS = Set.of("status", "page", "size", "key");

  /** Idempotency keys are unique-indexed; a btree entry holds at most about 2.7 kB. */
  static final int MAX_IDEMPOTENCY_KEY_LENGTH = 255;

  private final BodyReader bodies;

  public RunRequests(BodyReader bodies) {
    this.bodies = bodies;
  }

  /**
   * Reads a {@code POST /api/runs} body and its {@code Idempotency-Key} header; only a body that is
   * not a JSON object is thrown.
   */
  BoundBody<CreateRunRequest> create(String body, String idempotencyKey) {
    BoundBody<CreateRunRequest> request = bodies.read(body, CreateRunRequest.class);
    if (idempotencyKey != null
        && (idempotencyKey.isBlank() || idempotencyKey.length() > MAX_IDEMPOTENCY_KEY_LENGTH)) {
      return request.withErrorFirst(
          new FieldError(
              "Idempotency-Key",
              "must be 1 to " + MAX_IDEMPOTENCY_KEY_LENGTH + " characters, not blank"));
    }
    return request;
  }

  /** Reads a {@code PATCH /api/runs/{id}} body: the new requested cap. */
  int capChange(String body) {
    BoundBody<CapChangeRequest> request = bodies.read(body, CapChangeRequest.class);
    if (!request.errors().isEmpty()) {
      throw new ValidationProblem(request.errors());
    }
    return request.body().maxParallelBatches().intValue();
  }

  /**
   * Reads the filters and paging of {@code GET /api/runs}.
   *
   * @param parameters the names of all query parameters given
   */
  RunQuery runQuery(
      Collection<String> parameters, String status, String backfill, String page, String size) {
    List<FieldError> errors = new ArrayList<>();
    QueryParameters.unknown(parameters, LIST_PARAMETERS, errors);
    QueryParameters.storable("backfill", backfill, errors);
    RunStatus runStatus = null;
    if (status != null && !status.isBlank()) {
      try {
        runStatus = RunStatus.fromWire(status);
      } catch (IllegalArgumentException e) {
        errors.add(new FieldError("status", "must be one of " + wires(RunStatus.values())));
      }
    }
    PageRequest paging = QueryParameters.paging(page, size, errors);
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
  BatchQuery batchQuery(
      Collection<String> parameters, String status, String page, String size, String key) {
    List<FieldError> errors = new ArrayList<>();
    QueryParameters.unknown(parameters, BATCH_PARAMETERS, errors);
    BatchStatus batchStatus = null;
    if (status != null && !status.isBlank()) {
      try {
        batchStatus = BatchStatus.fromWire(status);
      } catch (IllegalArgumentException e) {
        errors.add(new FieldError("status", "must be one of " + wires(BatchStatus.values())));
      }
    }
    PageRequest paging = QueryParameters.paging(page, size, errors);
    if (!errors.isEmpty()) {
      throw new ValidationProblem(errors);
    }
    return new BatchQuery(batchStatus, paging, key);
  }

  /**
   * Whether {@code POST /api/runs} asks for a dry run: {@code dryRun=true} (K5); {@code false} or
   * absent is a create.
   *
   * @throws ValidationProblem for any other value
   */
  boolean dryRun(String value) {
    if (value == null || value.equals("false")) {
      return false;
    }
    if (value.equals("true")) {
      return true;
    }
    throw new ValidationProblem(List.of(new FieldError("dryRun", "must be true or false")));
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

  private static String wires(Enum<?>[] values) {
    return Arrays.stream(values).map(v -> v.name().toLowerCase(Locale.ROOT)).toList().toString();
  }
}

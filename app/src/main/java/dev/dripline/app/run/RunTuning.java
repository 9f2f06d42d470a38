package dev.dripline.app.run;

import dev.dripline.app.catalogue.PublishedBackfill;
import dev.dripline.app.request.BoundBody;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.store.run.BatchTuning;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.List;

/**
 * A create request's batch-size tuning (P4) resolved against its definition: each setting the run's
 * own if it gives one, else the definition's, else the default ({@link BatchTuning#resolve}). One
 * {@link FieldError} per bad field: {@code targetBatchDuration} that is not a positive ISO-8601
 * duration (within {@link BatchTuning#TARGET_EXPECTED}), a least size above the largest (the field
 * the run gave is named), a size given where neither the run nor its definition sets a target (it
 * would do nothing). Sizes below 1 are the request record's own constraints.
 */
final class RunTuning {
  static final String TARGET = "targetBatchDuration";
  static final String MIN = "minBatchSize";
  static final String MAX = "maxBatchSize";

  private RunTuning() {}

  /**
   * The run's tuning, or {@code null} if it is not tuned or a field is bad (then reported in {@code
   * errors}).
   *
   * @param definition the run's definition, or {@code null} if the request names none known
   * @param batchSize the run's batch size
   */
  static BatchTuning resolve(
      BoundBody<CreateRunRequest> bound,
      PublishedBackfill definition,
      int batchSize,
      List<FieldError> errors) {
    CreateRunRequest request = bound.body();
    Long target = null;
    if (request.targetBatchDuration() != null) {
      try {
        target = BatchTuning.targetMillis(Duration.parse(request.targetBatchDuration()));
      } catch (DateTimeParseException | ArithmeticException e) {
        errors.add(new FieldError(TARGET, "must be " + BatchTuning.TARGET_EXPECTED));
        return null;
      } catch (IllegalArgumentException e) {
        errors.add(new FieldError(TARGET, e.getMessage()));
        return null;
      }
    }
    if (bound.hasError(TARGET) || bound.hasError(MIN) || bound.hasError(MAX)) {
      return null;
    }
    Integer runMin = request.minBatchSize() == null ? null : request.minBatchSize().intValue();
    Integer runMax = request.maxBatchSize() == null ? null : request.maxBatchSize().intValue();
    if (definition == null) {
      // Only what the run gives can be checked.
      if (runMin != null && runMax != null && runMin > runMax) {
        errors.add(new FieldError(MIN, "must be at most maxBatchSize (" + runMax + ")"));
      }
      return null;
    }
    Long targetMillis = target != null ? target : definition.targetBatchMillis();
    Integer min = runMin != null ? runMin : definition.minBatchSize();
    Integer max = runMax != null ? runMax : definition.maxBatchSize();
    if (targetMillis == null) {
      String message =
          "takes effect only with a targetBatchDuration; neither the run nor backfill "
              + definition.name()
              + " sets one";
      if (runMin != null) {
        errors.add(new FieldError(MIN, message));
      }
      if (runMax != null) {
        errors.add(new FieldError(MAX, message));
      }
      return null;
    }
    if (min != null && max != null && min > max) {
      if (runMin != null) {
        errors.add(
            new FieldError(
                MIN,
                "must be at most maxBatchSize ("
                    + max
                    + (runMax == null ? ", backfill " + definition.name() + "'s" : "")
                    + ")"));
      } else {
        errors.add(
            new FieldError(
                MAX,
                "must be at least minBatchSize ("
                    + min
                    + ", backfill "
                    + definition.name()
                    + "'s)"));
      }
      return null;
    }
    return BatchTuning.resolve(targetMillis, min, max, batchSize);
  }
}

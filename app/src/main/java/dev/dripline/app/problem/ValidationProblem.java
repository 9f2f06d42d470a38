package dev.dripline.app.problem;

import dev.dripline.store.catalogue.FieldError;
import java.util.List;

/** A request that was rejected before anything changed: 400 with one error per field. */
public final class ValidationProblem extends ProblemException {
  private static final long serialVersionUID = 1L;

  private final transient List<FieldError> errors;

  public ValidationProblem(List<FieldError> errors) {
    super(summary(errors));
    this.errors = List.copyOf(errors);
  }

  /** A problem with a single rejected field. */
  public static ValidationProblem of(String field, String message) {
    return new ValidationProblem(List.of(new FieldError(field, message)));
  }

  public List<FieldError> errors() {
    return errors;
  }

  @Override
  public Problem toProblem() {
    return new Problem(
        Problem.TYPE_BASE + "validation", "Invalid request", 400, getMessage(), errors, null);
  }

  private static String summary(List<FieldError> errors) {
    if (errors.size() == 1) {
      FieldError only = errors.get(0);
      return abbreviated(only.field()) + ": " + only.message();
    }
    return errors.size() + " fields are invalid";
  }
}

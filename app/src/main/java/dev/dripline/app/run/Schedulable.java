package dev.dripline.app.run;

import static java.lang.annotation.ElementType.FIELD;
import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.PARAMETER;
import static java.lang.annotation.ElementType.TYPE_USE;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import io.micronaut.core.annotation.Introspected;
import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * The instant, if given, lies in the years 1970 to 9999: PostgreSQL's {@code timestamptz} and
 * Temporal's timers hold far less than {@link Instant} does, and a start before 1970 only means
 * "now" anyway.
 */
@Retention(RUNTIME)
@Target({FIELD, METHOD, PARAMETER, TYPE_USE})
@Constraint(validatedBy = Schedulable.Validator.class)
@interface Schedulable {
  Instant EARLIEST = Instant.EPOCH;
  Instant LATEST = OffsetDateTime.of(9999, 12, 31, 23, 59, 59, 0, ZoneOffset.UTC).toInstant();

  String message() default "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z";

  Class<?>[] groups() default {};

  Class<? extends Payload>[] payload() default {};

  /** Checks {@link Schedulable}; introspected, so the validator finds it without a context. */
  @Introspected
  final class Validator implements ConstraintValidator<Schedulable, Instant> {
    @Override
    public boolean isValid(Instant value, ConstraintValidatorContext context) {
      return value == null || (!value.isBefore(EARLIEST) && !value.isAfter(LATEST));
    }
  }
}

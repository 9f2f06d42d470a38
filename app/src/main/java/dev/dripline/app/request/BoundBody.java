package dev.dripline.app.request;

import dev.dripline.store.catalogue.FieldError;
import java.util.ArrayList;
import java.util.List;

/**
 * A request body bound to its record, with one error per field that was rejected. A rejected field
 * is {@code null} in {@link #body}; the service adds what only it can check (the catalogue's
 * verdict) before rejecting anything, so a client sees every problem at once.
 *
 * @param body the body's record
 * @param errors one entry per rejected field, in the order of the record's components
 */
public record BoundBody<T>(T body, List<FieldError> errors) {
  public BoundBody {
    errors = List.copyOf(errors);
  }

  /** Whether {@code field} was rejected. */
  public boolean hasError(String field) {
    return errors.stream().anyMatch(error -> error.field().equals(field));
  }

  /** This body with {@code error} reported before its own errors. */
  public BoundBody<T> withErrorFirst(FieldError error) {
    List<FieldError> all = new ArrayList<>();
    all.add(error);
    all.addAll(errors);
    return new BoundBody<>(body, all);
  }
}

package dev.dripline.app.target;

import dev.dripline.catalogue.FieldError;
import java.util.List;
import java.util.Map;

/**
 * The body of {@code POST /api/targets} as far as it could be read without the catalogue. Fields
 * that were malformed are {@code null} and have an entry in {@link #errors}; the service adds the
 * catalogue's verdict before rejecting anything, so a client sees every problem at once.
 *
 * @param name the target's name
 * @param backfill the definition's name
 * @param options option values as parsed from JSON; {@code null} if malformed
 * @param group the capacity group, or {@code null} for none
 * @param errors one entry per field rejected so far
 */
record CreateTargetRequest(
    String name,
    String backfill,
    Map<String, Object> options,
    String group,
    List<FieldError> errors) {

  boolean hasError(String field) {
    return errors.stream().anyMatch(error -> error.field().equals(field));
  }
}

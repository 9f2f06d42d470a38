package dev.dripline.store.catalogue;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * Options checked against a definition's schema.
 *
 * @param values normalized values with defaults applied, sorted by name; {@code Long} for integers,
 *     {@code BigDecimal} for decimals, ISO-8601 strings for dates and instants
 * @param errors one entry per rejected field; empty when valid
 */
public record ValidatedOptions(SortedMap<String, Object> values, List<FieldError> errors) {

  public boolean isValid() {
    return errors.isEmpty();
  }

  /**
   * Canonical JSON of the values: sorted keys, no white space. Identical options give identical
   * text, which is how duplicate active runs are recognised.
   */
  public String canonicalJson() {
    return CanonicalJson.write(values);
  }

  public Map<String, Object> asMap() {
    return values;
  }
}

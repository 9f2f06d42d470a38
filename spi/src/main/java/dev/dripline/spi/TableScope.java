package dev.dripline.spi;

import java.util.List;
import java.util.Objects;

/**
 * Which rows of a {@link TableBackfillDefinition}'s table a run visits: an SQL predicate over the
 * table's columns with {@code ?} parameters, e.g. {@code handle <> lower(trim(handle))} or {@code
 * tenant = ?}. The engine puts it in parentheses after its key comparison, both when it lists keys
 * and in {@link TableBatch#where()}.
 *
 * @param predicate SQL, with one {@code ?} per parameter
 * @param parameters bound in order: {@link Long}, {@link Integer}, {@link String}, {@link
 *     java.util.UUID}, {@link java.time.Instant}, {@link java.time.LocalDate}, {@link Boolean} or
 *     {@link java.math.BigDecimal}
 */
public record TableScope(String predicate, List<Object> parameters) {
  /** Every row. */
  public static final TableScope ALL = new TableScope("true", List.of());

  public TableScope {
    Objects.requireNonNull(predicate, "predicate");
    parameters = List.copyOf(parameters);
    long marks = predicate.chars().filter(c -> c == '?').count();
    if (marks != parameters.size()) {
      throw new IllegalArgumentException(
          "a scope with " + marks + " '?' needs as many parameters, not " + parameters.size());
    }
  }

  public static TableScope of(String predicate, Object... parameters) {
    return new TableScope(predicate, List.of(parameters));
  }
}

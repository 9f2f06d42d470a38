package dev.dripline.app.request;

import dev.dripline.app.run.PageRequest;
import dev.dripline.store.catalogue.FieldError;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The rules every listing's query parameters share. Parameters are checked all at once, one {@link
 * FieldError} per bad parameter, and unknown ones are rejected like unknown fields, so a misspelt
 * filter or a paging scheme the API does not have ({@code limit}, {@code cursor}) is not silently
 * ignored.
 */
public final class QueryParameters {
  static final int DEFAULT_PAGE_SIZE = 20;
  static final int MAX_PAGE_SIZE = 200;

  private QueryParameters() {}

  /** Adds an error for every query parameter that is not in {@code known}. */
  public static void unknown(
      Collection<String> parameters, Set<String> known, List<FieldError> errors) {
    for (String name : parameters) {
      if (!known.contains(name)) {
        errors.add(
            new FieldError(
                name, "unknown query parameter; known parameters: " + new TreeSet<>(known)));
      }
    }
  }

  /** Adds an error if a parameter's value cannot be compared with text in PostgreSQL. */
  public static void storable(String field, String value, List<FieldError> errors) {
    if (value != null && !JsonObjectBody.storable(value)) {
      errors.add(new FieldError(field, JsonObjectBody.UNSTORABLE));
    }
  }

  /**
   * Reads {@code page} (0-based, default 0) and {@code size} (1 to 200, default 20), so every
   * listing pages alike.
   *
   * @return the page asked for, or {@code null} if a parameter was rejected into {@code errors}
   */
  public static PageRequest paging(String page, String size, List<FieldError> errors) {
    Integer pageNumber = integer("page", page, 0, 0, Integer.MAX_VALUE, errors);
    Integer pageSize = integer("size", size, DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE, errors);
    return pageNumber == null || pageSize == null ? null : new PageRequest(pageNumber, pageSize);
  }

  private static Integer integer(
      String field, String text, int fallback, int min, int max, List<FieldError> errors) {
    if (text == null || text.isBlank()) {
      return fallback;
    }
    try {
      int value = Integer.parseInt(text.trim());
      if (value >= min && value <= max) {
        return value;
      }
    } catch (NumberFormatException e) {
      // reported below, like an out-of-range value
    }
    String range = max == Integer.MAX_VALUE ? "at least " + min : "between " + min + " and " + max;
    errors.add(new FieldError(field, "must be an integer " + range));
    return null;
  }
}

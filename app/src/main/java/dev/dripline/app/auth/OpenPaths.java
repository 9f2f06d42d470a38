package dev.dripline.app.auth;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The paths whose reads need no token ({@code DRIPLINE_AUTH_OPEN_PATHS}; by default {@code
 * /health}, {@code /health/**} and {@code /prometheus}). An entry matches its path exactly; an
 * entry ending in {@code /**} also matches any plain segments below it. Anything unusual in a path
 * — dot segments, empty segments, percent-escapes, {@code ;} — never matches, so a crafted path
 * cannot pass as an open one.
 */
final class OpenPaths {
  private static final Pattern PLAIN_SEGMENTS = Pattern.compile("(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*");

  private final List<String> entries;

  OpenPaths(List<String> entries) {
    this.entries = entries.stream().map(String::trim).filter(entry -> !entry.isEmpty()).toList();
  }

  boolean contains(String path) {
    if (!PLAIN_SEGMENTS.matcher(path).matches()) {
      return false;
    }
    for (String entry : entries) {
      if (entry.equals(path)) {
        return true;
      }
      if (entry.endsWith("/**")) {
        String base = entry.substring(0, entry.length() - 3);
        if (path.equals(base) || path.startsWith(base + "/")) {
          return true;
        }
      }
    }
    return false;
  }
}

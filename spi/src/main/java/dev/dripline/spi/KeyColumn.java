package dev.dripline.spi;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One column of a definition's key.
 *
 * @param name the column's name: a lower-case SQL identifier ({@code [a-z_][a-z0-9_]*}), so the
 *     engine can name it in the key scans it writes (K3) without quoting
 * @param type its type
 */
public record KeyColumn(String name, KeyType type) {
  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  public KeyColumn {
    Objects.requireNonNull(type, "type");
    if (name == null || !IDENTIFIER.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "a key column's name must be a lower-case SQL identifier, not " + name);
    }
  }

  public static KeyColumn of(String name, KeyType type) {
    return new KeyColumn(name, type);
  }
}

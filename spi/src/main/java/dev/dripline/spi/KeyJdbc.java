package dev.dripline.spi;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.UUID;

/**
 * Key values in and out of JDBC with PostgreSQL's driver: the types {@link KeyType} names, and the
 * other parameter types a {@link TableScope} may bind.
 */
public final class KeyJdbc {
  private KeyJdbc() {}

  /** Binds {@code value} as parameter {@code index} of {@code statement}. */
  public static void bind(PreparedStatement statement, int index, Object value)
      throws SQLException {
    if (value == null) {
      statement.setNull(index, Types.NULL);
    } else if (value instanceof Long number) {
      statement.setLong(index, number);
    } else if (value instanceof Integer number) {
      statement.setInt(index, number);
    } else if (value instanceof String text) {
      statement.setString(index, text);
    } else if (value instanceof Instant instant) {
      statement.setObject(index, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
    } else {
      statement.setObject(index, value);
    }
  }

  /**
   * Binds the values of {@code key} as parameters {@code index}, {@code index + 1}, …
   *
   * @return the index after the last one bound
   */
  public static int bind(PreparedStatement statement, int index, Key key) throws SQLException {
    for (int i = 0; i < key.size(); i++) {
      bind(statement, index++, key.get(i));
    }
    return index;
  }

  /** Reads column {@code column} of the current row as a key value of {@code type}. */
  public static Object read(ResultSet row, int column, KeyType type) throws SQLException {
    Object value =
        switch (type) {
          case BIGINT -> row.getLong(column);
          case INTEGER -> row.getInt(column);
          case TEXT -> row.getString(column);
          case UUID -> row.getObject(column, UUID.class);
          case TIMESTAMPTZ -> {
            OffsetDateTime time = row.getObject(column, OffsetDateTime.class);
            yield time == null ? null : time.toInstant();
          }
          case DATE -> row.getObject(column, LocalDate.class);
        };
    if (row.wasNull()) {
      throw new SQLException("a key column is null in column " + column);
    }
    return value;
  }

  /**
   * Reads columns {@code first}, {@code first + 1}, … of the current row as a key of {@code
   * schema}.
   */
  public static Key read(ResultSet row, int first, KeySchema schema) throws SQLException {
    Object[] values = new Object[schema.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = read(row, first + i, schema.column(i).type());
    }
    return Key.of(values);
  }
}

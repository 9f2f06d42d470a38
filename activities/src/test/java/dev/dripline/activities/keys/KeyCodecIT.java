package dev.dripline.activities.keys;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.spi.Key;
import dev.dripline.spi.KeyJdbc;
import dev.dripline.store.db.Database;
import dev.dripline.store.keys.KeyCodec;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@link dev.dripline.store.keys.KeyCodec}'s bytes order keys as PostgreSQL orders the typed values
 * (text in the "C" collation), and migration V13's {@code dripline_bigint_key} encodes a bigint as
 * the codec does, so records from before typed keys read as the same keys.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class KeyCodecIT {
  @Inject Database database;

  @Test
  void dripline_bigint_keyEncodesABigintAsTheCodecDoes() {
    long[] values = {Long.MIN_VALUE, -1_000_000_007L, -1, 0, 1, 42, 1L << 40, Long.MAX_VALUE};
    for (long value : values) {
      byte[] sql =
          database.withConnection(
              connection -> {
                try (PreparedStatement statement =
                    connection.prepareStatement("select dripline_bigint_key(?)")) {
                  statement.setLong(1, value);
                  try (ResultSet row = statement.executeQuery()) {
                    row.next();
                    return row.getBytes(1);
                  }
                }
              });
      assertThat(sql).as("dripline_bigint_key(%d)", value).isEqualTo(KeyCodec.encodeLong(value));
    }
  }

  @Test
  void postgresqlOrdersTheTypedValuesAsTheirBytes() {
    Random random = new Random(42);
    String[] texts = {"", "a", "ab", "b", "Z", "é", "日本", "a b", "\uD83D\uDE00"};
    List<Key> keys = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      keys.add(
          Key.of(
              texts[random.nextInt(texts.length)],
              (long) random.nextInt(5) - 2,
              random.nextInt(5) - 2,
              new UUID(random.nextLong(), random.nextLong()),
              Instant.ofEpochSecond(random.nextInt(3) - 1, random.nextInt(3) * 1_000L),
              LocalDate.ofEpochDay(random.nextInt(3) - 1)));
    }

    // PostgreSQL sorts the typed values; we sort their encodings as unsigned bytes.
    List<Integer> byPostgresql =
        database.withConnection(
            connection -> {
              StringBuilder sql = new StringBuilder("select i from (values ");
              for (int i = 0; i < keys.size(); i++) {
                sql.append(i == 0 ? "" : ", ")
                    .append("(?::int, ?::text, ?::bigint, ?::integer, ?::uuid, ?::timestamptz,")
                    .append(" ?::date)");
              }
              sql.append(") v (i, t, b, n, u, ts, d) order by t collate \"C\", b, n, u, ts, d, i");
              try (PreparedStatement statement = connection.prepareStatement(sql.toString())) {
                int index = 1;
                for (int i = 0; i < keys.size(); i++) {
                  statement.setInt(index++, i);
                  index = KeyJdbc.bind(statement, index, keys.get(i));
                }
                List<Integer> order = new ArrayList<>();
                try (ResultSet rows = statement.executeQuery()) {
                  while (rows.next()) {
                    order.add(rows.getInt(1));
                  }
                }
                return order;
              }
            });
    List<Integer> byBytes = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      byBytes.add(i);
    }
    byBytes.sort(
        Comparator.comparing((Integer i) -> KeyCodec.encode(keys.get(i)), Arrays::compareUnsigned)
            .thenComparing(i -> i));

    assertThat(byBytes).isEqualTo(byPostgresql);
  }
}

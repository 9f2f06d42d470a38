package dev.dripline.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class KeyTest {

  @Test
  void tuplesCompareLexicographically() {
    KeySchema orderLines =
        KeySchema.of(
            KeyColumn.of("order_id", KeyType.BIGINT), KeyColumn.of("line_no", KeyType.INTEGER));

    assertThat(orderLines.key(1042L, 3).compareTo(orderLines.key(1042L, 10))).isNegative();
    assertThat(orderLines.key(1041L, 99).compareTo(orderLines.key(1042L, 1))).isNegative();
    assertThat(orderLines.key(1042L, 3)).isEqualTo(orderLines.key(1042, 3L));
  }

  @Test
  void aKeyThatFitsItsSchemaIsConformedAsItselfAndOneThatDoesNotIsConvertedOrRejected() {
    KeySchema orderLines =
        KeySchema.of(
            KeyColumn.of("order_id", KeyType.BIGINT), KeyColumn.of("line_no", KeyType.INTEGER));
    Key fits = Key.of(1042L, 3);
    Key widened = Key.of(1042, 3);

    assertThat(orderLines.conform(fits)).isSameAs(fits);
    assertThat(orderLines.conform(widened)).isEqualTo(fits).isNotSameAs(widened);
    assertThat(orderLines.conform(widened).get(0)).isInstanceOf(Long.class);
    assertThatThrownBy(() -> orderLines.conform(Key.of(1042L, "3")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("line_no: ");
    assertThatThrownBy(() -> orderLines.conform(Key.of(1042L)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot have 1 value(s)");
  }

  @Test
  void uuidsCompareUnsignedAsPostgresqlDoes() {
    Key low = Key.of(UUID.fromString("7fffffff-ffff-ffff-ffff-ffffffffffff"));
    Key high = Key.of(UUID.fromString("80000000-0000-0000-0000-000000000000"));

    assertThat(low.compareTo(high)).isNegative();
  }

  @Test
  void textComparesByCodePointNotUtf16() {
    // U+FF5E is one UTF-16 unit above the surrogates that encode U+1F600; by code point it is
    // below.
    assertThat(Key.of("\uFF5E").compareTo(Key.of("\uD83D\uDE00"))).isNegative();
    assertThat(Key.of("ab").compareTo(Key.of("abc"))).isNegative();
    assertThat(Key.of("Zürich").compareTo(Key.of("Zurich"))).isPositive();
  }

  @Test
  void instantsKeepMicrosecondsAsTimestamptzDoes() {
    Instant withNanos = Instant.parse("2026-11-30T00:00:00.123456789Z");

    assertThat(Key.of(withNanos).getInstant(0))
        .isEqualTo(Instant.parse("2026-11-30T00:00:00.123456Z"));
    assertThat(
            KeySchema.of(KeyColumn.of("at", KeyType.TIMESTAMPTZ))
                .key(OffsetDateTime.of(2026, 11, 30, 1, 0, 0, 0, ZoneOffset.ofHours(1))))
        .isEqualTo(Key.of(Instant.parse("2026-11-30T00:00:00Z")));
  }

  @Test
  void aSchemaRejectsValuesOfTheWrongTypeNamingTheColumn() {
    KeySchema days = KeySchema.of(KeyColumn.of("day", KeyType.DATE));

    assertThatThrownBy(() -> days.key("2026-11-30"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("day")
        .hasMessageContaining("date");
    assertThatThrownBy(() -> days.key(LocalDate.of(2026, 11, 30), 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KeySchema.of(KeyColumn.of("n", KeyType.INTEGER)).key(Long.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void keyColumnsAreLowerCaseIdentifiersAndDistinct() {
    assertThatThrownBy(() -> KeyColumn.of("id; drop table runs", KeyType.BIGINT))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                KeySchema.of(KeyColumn.of("id", KeyType.BIGINT), KeyColumn.of("id", KeyType.TEXT)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aSpanHoldsItsEndsAndWhatLiesBetween() {
    KeySpan span = new KeySpan(Key.of(10L, 5), Key.of(12L, 1));

    assertThat(span.contains(Key.of(10L, 5))).isTrue();
    assertThat(span.contains(Key.of(11L, 999))).isTrue();
    assertThat(span.contains(Key.of(12L, 2))).isFalse();
  }

  @Test
  void keysShowAsTheApiShowsThem() {
    assertThat(Key.of(1042L, 3)).hasToString("[1042, 3]");
    assertThat(Key.of(LocalDate.of(2026, 11, 30))).hasToString("\"2026-11-30\"");
  }
}

package dev.dripline.store.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.spi.Key;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class KeyCodecTest {
  private static final String[] TEXTS = {
    "", "a", "ab", "abc", "b", "Z", "z", "Zurich", "Zürich", "日本", "\uFF5E", "\uD83D\uDE00", "a b"
  };

  @Test
  void everyKindOfKeyDecodesToItself() {
    List<Key> keys =
        List.of(
            Key.ofLong(Long.MIN_VALUE),
            Key.ofLong(-1),
            Key.ofLong(Long.MAX_VALUE),
            Key.of(Integer.MIN_VALUE),
            Key.of("Zürich 日本"),
            Key.of(""),
            Key.of(UUID.fromString("0b6a3c4e-1f2d-4c5b-8a9e-0123456789ab")),
            Key.of(Instant.parse("1969-12-31T23:59:59.999999Z")),
            Key.of(Instant.parse("2026-11-30T00:00:00Z")),
            Key.of(LocalDate.of(1900, 1, 1)),
            Key.of("tenant-7", 1042L, 3));

    for (Key key : keys) {
      assertThat(KeyCodec.decode(KeyCodec.encode(key))).isEqualTo(key);
    }
  }

  @Test
  void bytesOrderAsKeysDo() {
    Random random = new Random(20261203);
    List<Key> keys = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      keys.add(
          Key.of(
              TEXTS[random.nextInt(TEXTS.length)],
              (long) random.nextInt(7) - 3,
              new UUID(random.nextLong(), random.nextLong()),
              Instant.ofEpochSecond(random.nextInt(5) - 2, random.nextInt(3) * 1_000L),
              LocalDate.ofEpochDay(random.nextInt(5) - 2),
              random.nextInt(5) - 2));
    }

    List<Key> byKey = keys.stream().sorted().toList();
    List<Key> byBytes =
        keys.stream()
            .sorted(Comparator.comparing(KeyCodec::encode, Arrays::compareUnsigned))
            .toList();

    assertThat(byBytes).isEqualTo(byKey);
  }

  @Test
  void damagedBytesAreRefused() {
    byte[] bytes = KeyCodec.encode(Key.of("abc", 1L));

    assertThatThrownBy(() -> KeyCodec.decode(Arrays.copyOf(bytes, bytes.length - 1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KeyCodec.decode(new byte[] {0x7f}))
        .isInstanceOf(IllegalArgumentException.class);
  }
}

package dev.dripline.store.keys;

import dev.dripline.spi.Key;
import dev.dripline.spi.KeyType;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Keys as Dripline's records keep them ({@code bytea}): an order-preserving, self-describing
 * encoding, so PostgreSQL compares and indexes the keys of every {@link KeyType} and tuple as
 * bytes, in the order {@link Key#compareTo} gives, and the app reads them back without the
 * definition's code.
 *
 * <p>Each value is a type tag and its bytes; a tuple is its values' encodings in column order:
 *
 * <ul>
 *   <li>bigint {@code 0x11}, 8 bytes; integer {@code 0x12}, 4 bytes; timestamptz {@code 0x40}, 8
 *       bytes of microseconds since the epoch; date {@code 0x41}, 4 bytes of days since the epoch —
 *       each big-endian with the sign bit flipped, so that bytes order as the numbers do;
 *   <li>uuid {@code 0x30}, its 16 bytes;
 *   <li>text {@code 0x20}, its UTF-8 bytes and a terminating {@code 0x00} (PostgreSQL's text holds
 *       no NUL), so a prefix sorts first and the values after it stay aligned.
 * </ul>
 *
 * <p>Every value's encoding is prefix-free and the tags of one definition's keys are the same at
 * each position, so bytewise order is the tuple's lexicographic order. The bigint encoding is also
 * computed in SQL by {@code dripline_bigint_key(bigint)} (migration V13), for records written
 * before keys were typed; {@code KeyCodecIT} checks that both agree.
 */
public final class KeyCodec {
  static final byte BIGINT = 0x11;
  static final byte INTEGER = 0x12;
  static final byte TEXT = 0x20;
  static final byte UUID_TAG = 0x30;
  static final byte TIMESTAMPTZ = 0x40;
  static final byte DATE = 0x41;

  private KeyCodec() {}

  /** The bytes of {@code key}. */
  public static byte[] encode(Key key) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(16 * key.size());
    for (int i = 0; i < key.size(); i++) {
      Object value = key.get(i);
      if (value instanceof Long number) {
        out.write(BIGINT);
        writeLong(out, number ^ Long.MIN_VALUE);
      } else if (value instanceof Integer number) {
        out.write(INTEGER);
        writeInt(out, number ^ Integer.MIN_VALUE);
      } else if (value instanceof String text) {
        out.write(TEXT);
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        for (byte b : bytes) {
          if (b == 0) {
            throw new IllegalArgumentException("a text key may not contain NUL");
          }
        }
        out.writeBytes(bytes);
        out.write(0);
      } else if (value instanceof UUID uuid) {
        out.write(UUID_TAG);
        writeLong(out, uuid.getMostSignificantBits());
        writeLong(out, uuid.getLeastSignificantBits());
      } else if (value instanceof Instant instant) {
        out.write(TIMESTAMPTZ);
        long micros =
            Math.addExact(
                Math.multiplyExact(instant.getEpochSecond(), 1_000_000L),
                instant.getNano() / 1_000);
        writeLong(out, micros ^ Long.MIN_VALUE);
      } else if (value instanceof LocalDate date) {
        out.write(DATE);
        writeInt(out, Math.toIntExact(date.toEpochDay()) ^ Integer.MIN_VALUE);
      } else {
        throw new IllegalArgumentException("not a key value: " + value);
      }
    }
    return out.toByteArray();
  }

  /** The bytes of a {@code long} key: what {@code dripline_bigint_key(value)} gives in SQL. */
  public static byte[] encodeLong(long value) {
    return encode(Key.ofLong(value));
  }

  /**
   * The key {@code bytes} encode.
   *
   * @throws IllegalArgumentException when they are not an encoding of {@link #encode}
   */
  public static Key decode(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    List<Object> values = new ArrayList<>(2);
    try {
      while (in.hasRemaining()) {
        byte tag = in.get();
        switch (tag) {
          case BIGINT -> values.add(in.getLong() ^ Long.MIN_VALUE);
          case INTEGER -> values.add(in.getInt() ^ Integer.MIN_VALUE);
          case TEXT -> values.add(readText(in));
          case UUID_TAG -> values.add(new UUID(in.getLong(), in.getLong()));
          case TIMESTAMPTZ -> {
            long micros = in.getLong() ^ Long.MIN_VALUE;
            values.add(
                Instant.ofEpochSecond(
                    Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000));
          }
          case DATE -> values.add(LocalDate.ofEpochDay(in.getInt() ^ Integer.MIN_VALUE));
          default -> throw new IllegalArgumentException("unknown key tag " + tag);
        }
      }
    } catch (java.nio.BufferUnderflowException e) {
      throw new IllegalArgumentException("truncated key encoding", e);
    }
    return Key.of(values.toArray());
  }

  /** The key of {@code bytes}, or null for null. */
  public static Key decodeOrNull(byte[] bytes) {
    return bytes == null ? null : decode(bytes);
  }

  private static String readText(ByteBuffer in) {
    int start = in.position();
    while (in.get() != 0) {
      // up to the terminator
    }
    return new String(
        in.array(), in.arrayOffset() + start, in.position() - 1 - start, StandardCharsets.UTF_8);
  }

  private static void writeLong(ByteArrayOutputStream out, long value) {
    for (int shift = 56; shift >= 0; shift -= 8) {
      out.write((int) (value >>> shift));
    }
  }

  private static void writeInt(ByteArrayOutputStream out, int value) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      out.write(value >>> shift);
    }
  }
}

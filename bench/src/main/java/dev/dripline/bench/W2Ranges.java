package dev.dripline.bench;

import dev.dripline.spi.Key;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * W2's batches, planned the way Dripline plans a run of the example ({@link W2Example}), so the
 * baselines process exactly the ranges Dripline's batches cover.
 *
 * <p>Dripline's planner ({@code PlanningActivitiesImpl}) asks the definition's {@code keysAfter}
 * for pages of {@code batchSize * max(1, min(100, 100000 / batchSize))} keys after its cursor
 * (100,000: {@code MAX_KEYS_PER_PAGE}; 100: {@code DRIPLINE_PLAN_PAGE_BATCHES}, or with chains up
 * to half its plan-ahead window), cuts each page into batches of {@code batchSize} keys ({@code
 * [first key, last key]}, inclusive) and keeps a trailing partial batch only on the last page. This
 * class runs the same query text ({@link W2Example#keysAfter}) in pages of the first size and cuts
 * the same way — whole batches, so the page size does not move a range; W2 checks that every
 * system's ranges equal these.
 */
final class W2Ranges {
  /** Dripline's {@code PlanningActivitiesImpl.MAX_KEYS_PER_PAGE}. */
  static final int MAX_KEYS_PER_PAGE = 100_000;

  /** Dripline's default {@code dripline.engine.plan-page-batches}. */
  static final int PLAN_PAGE_BATCHES = 100;

  private W2Ranges() {}

  /** One batch: keys {@code start..end} (inclusive), {@code size} of them in scope. */
  record Range(Key start, Key end, int size) {}

  /** Keys asked for per page, as Dripline computes it. */
  static int pageKeys(int batchSize) {
    return batchSize * Math.max(1, Math.min(PLAN_PAGE_BATCHES, MAX_KEYS_PER_PAGE / batchSize));
  }

  /**
   * Pages through the scope and hands each batch to {@code sink} as soon as its page is read (a
   * pipelined planner, like Dripline's).
   *
   * @return the number of batches planned
   */
  static int plan(Connection connection, W2Example example, int batchSize, Consumer<Range> sink)
      throws SQLException {
    int limit = pageKeys(batchSize);
    int count = 0;
    Key after = null;
    while (true) {
      List<Key> keys = example.keysAfter(connection, after, limit);
      boolean done = keys.size() < limit;
      for (int from = 0; from < keys.size(); from += batchSize) {
        int to = Math.min(from + batchSize, keys.size());
        if (to - from < batchSize && !done) {
          break;
        }
        Range range = new Range(keys.get(from), keys.get(to - 1), to - from);
        sink.accept(range);
        after = range.end();
        count++;
      }
      if (done) {
        return count;
      }
    }
  }

  /** All ranges at once (for partitioners and the reference plan). */
  static List<Range> planAll(Connection connection, W2Example example, int batchSize)
      throws SQLException {
    List<Range> ranges = new ArrayList<>();
    plan(connection, example, batchSize, ranges::add);
    return ranges;
  }

  /** An order-independent summary of a set of ranges, to compare two systems' batches. */
  record Fingerprint(int batches, long keys, long hash) {
    static Fingerprint of(Iterable<Range> ranges) {
      int batches = 0;
      long keys = 0;
      long hash = 0;
      for (Range r : ranges) {
        batches++;
        keys += r.size();
        // Sum of mixed per-range hashes: independent of the order the ranges were collected in.
        long h =
            r.start().hashCode() * 0x9E3779B97F4A7C15L
                ^ Long.rotateLeft(r.end().hashCode(), 21)
                ^ r.size();
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        hash += h;
      }
      return new Fingerprint(batches, keys, hash);
    }
  }
}

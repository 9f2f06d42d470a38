package dev.dripline.activities.run;

import dev.dripline.spi.KeySpan;
import dev.dripline.store.run.BatchStart;

/** What an attempt needs from a batch row it marked running under its lease. */
record StartedBatch(int number, KeySpan range, int size, String options, String pool) {
  /** The batch a statement marked running; null if none. */
  static StartedBatch of(BatchStart start) {
    return start == null
        ? null
        : new StartedBatch(
            start.number(),
            new KeySpan(start.startKey(), start.endKey()),
            start.size(),
            start.options(),
            start.pool());
  }
}

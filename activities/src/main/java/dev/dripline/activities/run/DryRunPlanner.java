package dev.dripline.activities.run;

import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.TimeWindows;
import dev.dripline.store.dryrun.DryRunAnswer;
import dev.dripline.store.dryrun.DryRunAnswer.SampleBatch;
import dev.dripline.store.dryrun.DryRunRequest;
import dev.dripline.store.keys.KeyJson;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;

/**
 * Plans a dry run (K5 in docs/spec.md) as planning would plan the run — the same keys, the same cut
 * into batches — but saves nothing: it counts the keys in pages, up to the request's bound, and
 * keeps only the first batches, the first and the last key.
 */
@Singleton
public class DryRunPlanner {
  /** Batches a dry run shows. */
  static final int SAMPLE_BATCHES = 5;

  /** Keys asked for per page. */
  static final int PAGE = 100_000;

  private final BackfillRegistry registry;
  private final RunOptionsReader optionsReader;

  public DryRunPlanner(BackfillRegistry registry, RunOptionsReader optionsReader) {
    this.registry = registry;
    this.optionsReader = optionsReader;
  }

  /** Whether this process hosts {@code backfill}. */
  public boolean hosts(String backfill) {
    return registry.find(backfill).isPresent();
  }

  /** Plans {@code request}; a definition's failure is the answer's error. */
  public DryRunAnswer plan(DryRunRequest request) {
    try {
      KeyedBackfill definition = registry.require(request.backfill());
      BackfillContext context =
          optionsReader.context(0, definition.definition(), request.options());
      long cap = request.maxRecords() == null ? Long.MAX_VALUE : request.maxRecords();
      return definition instanceof KeyedBackfill.Windows windows
          ? windows(request, windows, context, cap)
          : keys(request, definition, context, cap);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      return DryRunAnswer.failed(request.id(), ErrorText.of(e));
    }
  }

  private static DryRunAnswer keys(
      DryRunRequest request, KeyedBackfill definition, BackfillContext context, long cap)
      throws Exception {
    long wanted = Math.min(cap, request.bound());
    long counted = 0;
    Key first = null;
    Key last = null;
    List<Key> head = new ArrayList<>();
    int headKeys = SAMPLE_BATCHES * request.batchSize();
    boolean exhausted = false;
    while (counted < wanted) {
      int limit = (int) Math.min(PAGE, wanted - counted);
      List<Key> page = definition.keysAfter(context, last, limit);
      for (Key key : page) {
        if (first == null) {
          first = key;
        }
        if (head.size() < headKeys) {
          head.add(key);
        }
        last = key;
      }
      counted += page.size();
      if (page.size() < limit) {
        exhausted = true;
        break;
      }
    }
    // Stopped at maxRecords: exact, as the run would stop there too. Stopped at the bound alone:
    // more keys may follow.
    boolean exact = exhausted || counted >= cap;
    List<SampleBatch> samples = new ArrayList<>();
    for (int from = 0; from < head.size(); from += request.batchSize()) {
      int to = Math.min(from + request.batchSize(), head.size());
      samples.add(
          new SampleBatch(
              KeyJson.toJson(head.get(from)), KeyJson.toJson(head.get(to - 1)), to - from));
    }
    long batches = (counted + request.batchSize() - 1) / request.batchSize();
    return new DryRunAnswer(
        request.id(),
        null,
        counted,
        exact,
        batches,
        KeyJson.toJson(first),
        KeyJson.toJson(last),
        samples);
  }

  private static DryRunAnswer windows(
      DryRunRequest request, KeyedBackfill.Windows windows, BackfillContext context, long cap)
      throws Exception {
    TimeWindows all = windows.windows(context);
    long total = Math.min(all.count(), cap);
    List<SampleBatch> samples = new ArrayList<>();
    for (long i = 0; i < Math.min(SAMPLE_BATCHES, total); i++) {
      KeySpan span = KeyedBackfill.Windows.span(all.window(i));
      samples.add(
          new SampleBatch(KeyJson.toJson(span.startKey()), KeyJson.toJson(span.endKey()), 1));
    }
    return new DryRunAnswer(
        request.id(),
        null,
        total,
        true,
        total,
        total == 0 ? null : KeyJson.toJson(KeyedBackfill.Windows.span(all.window(0)).startKey()),
        total == 0
            ? null
            : KeyJson.toJson(KeyedBackfill.Windows.span(all.window(total - 1)).endKey()),
        samples);
  }
}

package dev.dripline.activities.run;

import dev.dripline.activities.registry.BackfillRegistry;
import dev.dripline.activities.registry.KeyedBackfill;
import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeyJson;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.TimeWindows;
import dev.dripline.workflows.dryrun.DryRunAnswer;
import dev.dripline.workflows.dryrun.DryRunAnswer.SampleBatch;
import dev.dripline.workflows.dryrun.DryRunRequest;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;

/**
 * Plans a dry run (K5 in docs/spec.md) as planning would plan the run — the same keys, checked as
 * planning checks them ({@code PlanningActivitiesImpl.checked}), the same cut into batches — but
 * saves nothing: it counts the keys in pages, up to the request's bound, and keeps only the first
 * batches, the first and the last key.
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

  /**
   * Plans {@code request}; a definition's failure, and keys that planning would refuse, are the
   * answer's error.
   */
  public DryRunAnswer plan(DryRunRequest request) {
    try {
      KeyedBackfill definition = registry.require(request.backfill());
      BackfillContext context =
          optionsReader.context(0, definition.definition(), request.options());
      long cap = request.maxRecords() == null ? Long.MAX_VALUE : request.maxRecords();
      return definition instanceof KeyedBackfill.Windows windows
          ? windows(windows, context, cap)
          : keys(request, definition, context, cap);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      // Planning's own refusals (keys out of order, say) read as the run's error would.
      return DryRunAnswer.failed(
          e instanceof ApplicationFailure failure
              ? ErrorText.truncate(failure.getOriginalMessage())
              : ErrorText.of(e));
    }
  }

  private static DryRunAnswer keys(
      DryRunRequest request, KeyedBackfill definition, BackfillContext context, long cap)
      throws Exception {
    long wanted = Math.min(cap, request.bound());
    long counted = 0;
    Key first = null;
    Key last = null;
    // The first batches as the planner would cut them, kept as their ends and sizes only: a batch
    // may be larger than a page, and a dry run holds no more keys than planning does.
    List<Key> sampleStarts = new ArrayList<>();
    List<Key> sampleEnds = new ArrayList<>();
    List<Integer> sampleSizes = new ArrayList<>();
    long sampledKeys = (long) SAMPLE_BATCHES * request.batchSize();
    boolean exhausted = false;
    while (counted < wanted) {
      int limit = (int) Math.min(PAGE, wanted - counted);
      List<Key> page =
          PlanningActivitiesImpl.checked(
              definition, last, definition.keysAfter(context, last, limit), limit);
      for (Key key : page) {
        long index = counted++;
        if (first == null) {
          first = key;
        }
        if (index < sampledKeys) {
          if (index % request.batchSize() == 0) {
            sampleStarts.add(key);
            sampleEnds.add(key);
            sampleSizes.add(0);
          }
          int at = sampleEnds.size() - 1;
          sampleEnds.set(at, key);
          sampleSizes.set(at, sampleSizes.get(at) + 1);
        }
        last = key;
      }
      if (page.size() < limit) {
        exhausted = true;
        break;
      }
    }
    // Stopped at maxRecords: exact, as the run would stop there too. Stopped at the bound alone:
    // more keys may follow.
    boolean exact = exhausted || counted >= cap;
    List<SampleBatch> samples = new ArrayList<>();
    for (int i = 0; i < sampleStarts.size(); i++) {
      samples.add(
          new SampleBatch(
              KeyJson.toJson(sampleStarts.get(i)),
              KeyJson.toJson(sampleEnds.get(i)),
              sampleSizes.get(i)));
    }
    long batches = (counted + request.batchSize() - 1) / request.batchSize();
    return new DryRunAnswer(
        null, counted, exact, batches, KeyJson.toJson(first), KeyJson.toJson(last), samples);
  }

  private static DryRunAnswer windows(
      KeyedBackfill.Windows windows, BackfillContext context, long cap) throws Exception {
    TimeWindows all = windows.windows(context);
    long total = Math.min(all.count(), cap);
    List<SampleBatch> samples = new ArrayList<>();
    for (long i = 0; i < Math.min(SAMPLE_BATCHES, total); i++) {
      KeySpan span = KeyedBackfill.Windows.span(all.window(i));
      samples.add(
          new SampleBatch(KeyJson.toJson(span.startKey()), KeyJson.toJson(span.endKey()), 1));
    }
    return new DryRunAnswer(
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

package dev.dripline.store.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Batch-size tuning's rule (P4): moving average → next size, clamps and the ×1.5 bound. */
class BatchTuningTest {
  /** A second per batch, sizes 1..1000. */
  private final BatchTuning tuning = new BatchTuning(1_000, 1, 1_000);

  /** {@code batches} batches of {@code keysEach} keys that took {@code millisEach} each. */
  private static RecentBatches measured(int batches, int keysEach, double millisEach) {
    return new RecentBatches(batches, (long) batches * keysEach, batches * millisEach);
  }

  @Test
  void withoutMeasurementsTheRunKeepsItsBatchSize() {
    assertThat(tuning.nextSize(40, RecentBatches.NONE)).isEqualTo(40);
    assertThat(tuning.nextSize(40, null)).isEqualTo(40);
  }

  @Test
  void theStartingSizeIsTheRunsBatchSizeWithinTheBounds() {
    BatchTuning bounded = new BatchTuning(1_000, 20, 500);
    assertThat(bounded.startingSize(100)).isEqualTo(100);
    assertThat(bounded.startingSize(10)).isEqualTo(20);
    assertThat(bounded.startingSize(900)).isEqualTo(500);
  }

  @Test
  void aSizeThatMeetsTheTargetStaysPut() {
    // 100 keys in 1 s: 100 meets a target of 1 s.
    assertThat(tuning.nextSize(100, measured(20, 100, 1_000))).isEqualTo(100);
  }

  @Test
  void theSizeMovesToTheOneThatMeetsTheTargetWhenWithinOneStep() {
    // 100 keys in 800 ms: 125 keys take 1 s.
    assertThat(tuning.nextSize(100, measured(20, 100, 800))).isEqualTo(125);
    // 100 keys in 1,250 ms: 80 keys take 1 s.
    assertThat(tuning.nextSize(100, measured(20, 100, 1_250))).isEqualTo(80);
  }

  @Test
  void fastBatchesGrowTheSizeByAtMostHalf() {
    // 10 keys in 10 ms: 1,000 would meet the target, one step reaches 15.
    assertThat(tuning.nextSize(10, measured(20, 10, 10))).isEqualTo(15);
    assertThat(tuning.nextSize(15, measured(20, 10, 10))).isEqualTo(22);
    assertThat(tuning.nextSize(101, measured(20, 10, 10))).isEqualTo(151);
  }

  @Test
  void slowBatchesShrinkTheSizeByAtMostAThird() {
    // 300 keys in 30 s: 10 would meet the target, one step reaches 200.
    assertThat(tuning.nextSize(300, measured(20, 300, 30_000))).isEqualTo(200);
    // ceil(100 / 1.5) = 67: 66 would be more than ×1.5 smaller.
    assertThat(tuning.nextSize(100, measured(20, 100, 30_000))).isEqualTo(67);
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 7, 10, 99, 100, 101, 1_000_001, Integer.MAX_VALUE / 2})
  void noStepIsMoreThanOneAndAHalfTimesTheSizeBeforeItEitherWay(int current) {
    BatchTuning wide = new BatchTuning(1_000, 1, Integer.MAX_VALUE);
    int up = wide.nextSize(current, measured(20, 10, 0));
    int down = wide.nextSize(current, measured(20, 10, 1e12));
    assertThat((double) up).isLessThanOrEqualTo(current * BatchTuning.MAX_STEP);
    assertThat(up).isGreaterThanOrEqualTo(current);
    assertThat((double) current).isLessThanOrEqualTo(down * BatchTuning.MAX_STEP);
    assertThat(down).isLessThanOrEqualTo(current).isPositive();
  }

  @Test
  void aSizeOfOneCannotGrowWithoutJumpingMoreThanHalf() {
    assertThat(tuning.nextSize(1, measured(20, 1, 1))).isEqualTo(1);
    assertThat(tuning.nextSize(2, measured(20, 2, 1))).isEqualTo(3);
  }

  @Test
  void theBoundsWinOverTheTarget() {
    BatchTuning bounded = new BatchTuning(1_000, 50, 120);
    assertThat(bounded.nextSize(100, measured(20, 100, 10))).isEqualTo(120);
    assertThat(bounded.nextSize(60, measured(20, 100, 100_000))).isEqualTo(50);
    // A size outside the bounds (they changed) is brought within them first.
    assertThat(bounded.nextSize(500, RecentBatches.NONE)).isEqualTo(120);
  }

  @Test
  void batchesMeasuredAtNoTimeGrowByTheLargestStep() {
    assertThat(tuning.nextSize(100, new RecentBatches(20, 2_000, 0))).isEqualTo(150);
  }

  @Test
  void theRateIsAveragedOverEveryMeasuredKey() {
    // 20 batches: 10 of 50 keys in 250 ms and 10 of 150 keys in 1,250 ms → 2,000 keys in 15 s,
    // 133 keys per second: 133 meets the target.
    RecentBatches mixed = new RecentBatches(20, 10 * 50 + 10 * 150, 10 * 250 + 10 * 1_250);
    assertThat(tuning.nextSize(100, mixed)).isEqualTo(133);
  }

  @Test
  void resolvingFillsTheDefaultsAndLeavesAnUntunedRunUntuned() {
    assertThat(BatchTuning.resolve(null, 5, 10, 100)).isNull();
    assertThat(BatchTuning.resolve(2_000L, null, null, 10))
        .isEqualTo(new BatchTuning(2_000, 1, BatchTuning.DEFAULT_MAX_BATCH_SIZE));
    assertThat(BatchTuning.resolve(2_000L, null, null, 250_000))
        .isEqualTo(new BatchTuning(2_000, 1, 250_000));
    assertThat(BatchTuning.resolve(2_000L, 300_000, null, 10))
        .isEqualTo(new BatchTuning(2_000, 300_000, 300_000));
    assertThat(BatchTuning.resolve(2_000L, 5, 50, 10)).isEqualTo(new BatchTuning(2_000, 5, 50));
  }

  @Test
  void aTargetIsAPositiveDurationOfAMillisecondToADay() {
    assertThat(BatchTuning.targetMillis(Duration.ofSeconds(2))).isEqualTo(2_000);
    assertThat(BatchTuning.targetMillis(Duration.ofMillis(1))).isEqualTo(1);
    assertThat(BatchTuning.targetMillis(Duration.ofDays(1))).isEqualTo(86_400_000);
    for (Duration bad :
        new Duration[] {
          Duration.ZERO, Duration.ofSeconds(-1), Duration.ofNanos(999_999), Duration.ofHours(25)
        }) {
      assertThatThrownBy(() -> BatchTuning.targetMillis(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("positive ISO-8601 duration");
    }
  }

  @Test
  void boundsOutOfOrderAreRefused() {
    assertThatThrownBy(() -> new BatchTuning(1_000, 10, 9))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new BatchTuning(0, 1, 9)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> BatchTuning.resolve(1_000L, 10, 9, 10))
        .isInstanceOf(IllegalArgumentException.class);
  }
}

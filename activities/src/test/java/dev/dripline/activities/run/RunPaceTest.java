package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RunPaceTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  @Test
  void aLaneRestsTheRatioTimesTheBatchsDuration() {
    assertThat(RunPace.restNanos(1, 2 * SECOND)).isEqualTo(2 * SECOND);
    assertThat(RunPace.restNanos(0.5, 2 * SECOND)).isEqualTo(SECOND);
    assertThat(RunPace.restNanos(100, 3)).isEqualTo(300);
    assertThat(RunPace.restNanos(1.5, 1)).as("rounded up").isEqualTo(2);
  }

  @Test
  void aRatioOfZeroOrABatchThatTookNoTimeRestsNot() {
    assertThat(RunPace.restNanos(0, SECOND)).isZero();
    assertThat(RunPace.restNanos(1, 0)).isZero();
    assertThat(RunPace.restNanos(1, -SECOND)).isZero();
    assertThat(RunPace.restNanos(-1, SECOND)).isZero();
    assertThat(RunPace.restNanos(Double.NaN, SECOND)).isZero();
  }

  @Test
  void aRestIsSleptInSlicesOfAtMostASecond() {
    assertThat(RunPace.sliceMillis(90 * SECOND)).isEqualTo(1_000);
    assertThat(RunPace.sliceMillis(SECOND)).isEqualTo(1_000);
    assertThat(RunPace.sliceMillis(SECOND / 4)).isEqualTo(250);
    assertThat(RunPace.sliceMillis(1)).as("what is left, rounded up").isEqualTo(1);
    assertThat(RunPace.sliceMillis(0)).isZero();
    assertThat(RunPace.sliceMillis(-SECOND)).isZero();
  }
}

package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LaneRestTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  @Test
  void aLaneRestsTheRatioTimesTheBatchsDuration() {
    assertThat(LaneRest.restNanos(1, 2 * SECOND)).isEqualTo(2 * SECOND);
    assertThat(LaneRest.restNanos(0.5, 2 * SECOND)).isEqualTo(SECOND);
    assertThat(LaneRest.restNanos(100, 3)).isEqualTo(300);
    assertThat(LaneRest.restNanos(1.5, 1)).as("rounded up").isEqualTo(2);
  }

  @Test
  void aRatioOfZeroOrABatchThatTookNoTimeRestsNot() {
    assertThat(LaneRest.restNanos(0, SECOND)).isZero();
    assertThat(LaneRest.restNanos(1, 0)).isZero();
    assertThat(LaneRest.restNanos(1, -SECOND)).isZero();
    assertThat(LaneRest.restNanos(-1, SECOND)).isZero();
    assertThat(LaneRest.restNanos(Double.NaN, SECOND)).isZero();
  }

  @Test
  void aRestIsSleptInSlicesOfAtMostASecond() {
    assertThat(LaneRest.sliceMillis(90 * SECOND)).isEqualTo(1_000);
    assertThat(LaneRest.sliceMillis(SECOND)).isEqualTo(1_000);
    assertThat(LaneRest.sliceMillis(SECOND / 4)).isEqualTo(250);
    assertThat(LaneRest.sliceMillis(1)).as("what is left, rounded up").isEqualTo(1);
    assertThat(LaneRest.sliceMillis(0)).isZero();
    assertThat(LaneRest.sliceMillis(-SECOND)).isZero();
  }
}

package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ChainPaceTest {
  /** The workflow's window: 200 batches, or two seconds of what the chains take if more. */
  private static int window(double takenPerMilli) {
    return (int) Math.max(200, Math.ceil(takenPerMilli * 2_000));
  }

  /**
   * The planner's first four reports of a W2 run (docs/benchmarks.md): pages of 25, 50, 100 and 100
   * batches while four chains of 12 ms batches start taking them.
   */
  private static ChainPace firstReportsOfW2(ChainPace pace) {
    return pace.report(55, 25, 25, ChainPaceTest::window)
        .report(136, 66, 50, ChainPaceTest::window)
        .report(259, 133, 100, ChainPaceTest::window)
        .report(404, 202, 100, ChainPaceTest::window);
  }

  @Test
  void theFirstReportsOfAFastRunSizeTheWindowBeforeTheFirstLook() {
    ChainPace pace = new ChainPace();

    pace = firstReportsOfW2(pace);

    // 9 + 33 taken from 55 to 259 ms; the report at 404 ms starts the next measurement.
    assertThat(pace.takenPerMilli()).isCloseTo(42 / 204.0, within(1e-9));
    assertThat(window(pace.takenPerMilli())).isGreaterThan(400);
    assertThat(pace.lookEveryMillis()).isEqualTo(ChainPace.MIN_LOOK_MILLIS);
  }

  @Test
  void reportsMomentsApartGiveNoPace() {
    ChainPace pace = new ChainPace();

    pace = pace.report(1_000, 100, 100, ChainPaceTest::window);
    pace = pace.report(1_050, 150, 100, ChainPaceTest::window);

    assertThat(pace.takenPerMilli()).isZero();
  }

  @Test
  void aSlowRunIsLookedAtWhenAQuarterOfItsWindowIsTaken() {
    ChainPace pace = new ChainPace();

    // Two batches a second out of a window of 32: a quarter lasts four seconds.
    pace = pace.report(0, 32, 32, ChainPaceTest::window);
    pace = pace.report(5_000, 32, 10, x -> 32);

    assertThat(pace.takenPerMilli()).isCloseTo(0.002, within(1e-9));
    assertThat(pace.lookEveryMillis()).isEqualTo(4_000);

    // Ten times slower still: no longer than the longest look.
    pace = pace.report(10_000, 32, 1, x -> 32);
    assertThat(pace.lookEveryMillis()).isEqualTo(ChainPace.MAX_LOOK_MILLIS);
  }

  @Test
  void restartForgetsThePaceAndLooksSoon() {
    ChainPace pace = new ChainPace();
    pace = pace.report(0, 32, 32, ChainPaceTest::window);
    pace = pace.report(5_000, 32, 10, x -> 32);

    pace = pace.restart();

    assertThat(pace.takenPerMilli()).isZero();
    assertThat(pace.lookEveryMillis()).isEqualTo(ChainPace.MIN_LOOK_MILLIS);
    // The next report starts a new measurement rather than counting from the old one.
    pace = pace.report(5_100, 20, 0, ChainPaceTest::window);
    assertThat(pace.takenPerMilli()).isZero();
  }
}

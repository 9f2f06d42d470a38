package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlanWindowTest {
  private static final long RUN = 7;

  /** Paces made by the windows under test, as the workflow's factory makes them. */
  private final List<ChainPace> paces = new ArrayList<>();

  private PlanWindow window(int planPageBatches, long chainMillis) {
    return new PlanWindow(
        RUN,
        planPageBatches,
        chainMillis,
        false,
        () -> {
          ChainPace pace = new ChainPace(ChainPace.MIN_SPAN_MILLIS);
          paces.add(pace);
          return pace;
        });
  }

  /** Starts the next call and has it plan {@code created} batches, leaving {@code pending}. */
  private static PlanRequest call(
      PlanWindow window, int cap, long nowMillis, int created, int pending) {
    PlanRequest request = window.nextCall(cap, false).orElseThrow();
    window.planned(new PlanPage(created, false, null, pending), null);
    window.takePage(window.takePlanned().orElseThrow().page(), nowMillis, cap);
    return request;
  }

  @Test
  void withoutChainsCallsRampFromAQuarterPageToWholePages() {
    PlanWindow window = window(100, 0);

    List<Integer> asked = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      PlanRequest request = call(window, 4, i, 25, -1);
      assertThat(request.runId()).isEqualTo(RUN);
      assertThat(request.keepPending()).isZero();
      asked.add(request.maxBatches());
    }

    assertThat(asked).containsExactly(25, 50, 100, 100);
  }

  @Test
  void theRampNeverAsksForFewerThanTwiceTheCap() {
    PlanWindow window = window(100, 0);

    assertThat(call(window, 20, 0, 40, -1).maxBatches()).isEqualTo(40);
    assertThat(call(window, 20, 1, 50, -1).maxBatches()).isEqualTo(50);
    assertThat(call(window, 20, 2, 100, -1).maxBatches()).isEqualTo(100);
  }

  @Test
  void aPageIsAtLeastTheCap() {
    PlanWindow window = window(5, 0);

    assertThat(window.pageBatches(8)).isEqualTo(8);
    assertThat(call(window, 8, 0, 8, -1).maxBatches()).isEqualTo(8);
    assertThat(call(window, 8, 1, 8, -1).maxBatches()).isEqualTo(8);
  }

  @Test
  void aRunWithoutChainsKeepsNoWindowAndNeverMakesAPace() {
    PlanWindow window = window(100, 0);

    call(window, 4, 0, 25, -1);
    window.lookSoon();

    assertThat(window.keepsAhead(false)).isFalse();
    assertThat(window.runsLow(4, false)).isFalse();
    assertThat(paces).isEmpty();
  }

  @Test
  void withChainsTheWindowIsTwoPagesOrSixteenPerSlotAndACallAsksForHalfOfIt() {
    PlanWindow window = window(100, 10_000);

    assertThat(window.size(4)).isEqualTo(200);
    assertThat(window.size(16)).isEqualTo(256);
    // Half the window of 256, ramped: a quarter (never under twice the cap), a half, then whole.
    List<Integer> asked = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      PlanRequest request = call(window, 16, i, 10, 10);
      assertThat(request.keepPending()).isEqualTo(256);
      asked.add(request.maxBatches());
    }
    assertThat(asked).containsExactly(32, 64, 128, 128);
  }

  @Test
  void theChainsPaceWidensTheWindowToTwoSecondsOfWhatTheyTakeWithinItsBound() {
    PlanWindow window = window(10, 10_000);

    assertThat(window.size(1, 0)).isEqualTo(20);
    assertThat(window.size(1, 0.5)).isEqualTo(1_000);
    assertThat(window.size(1, 10)).isEqualTo(PlanWindow.MAX_PACED);
    assertThat(window.size(1_000, 10)).isEqualTo(16_000);
  }

  @Test
  void reportsOfWhatThePlannerFoundPendingSizeTheWindowAndLookSoonForgetsIt() {
    PlanWindow window = window(10, 10_000);

    // 20 pending at 0 ms; a second later 20 again after 20 added: the chains took 20.
    call(window, 1, 0, 20, 20);
    call(window, 1, 1_000, 20, 20);

    assertThat(paces).hasSize(1);
    assertThat(window.size(1)).isEqualTo(40);
    window.lookSoon();
    assertThat(window.size(1)).isEqualTo(20);
    assertThat(window.lookEveryMillis()).isEqualTo(ChainPace.MIN_LOOK_MILLIS);
  }

  @Test
  void withChainsTheWindowIsKeptOnceThePlannerReportedWhatIsPending() {
    PlanWindow window = window(100, 10_000);
    assertThat(window.keepsAhead(false)).isFalse();

    call(window, 4, 0, 50, 150);

    assertThat(window.keepsAhead(false)).isTrue();
    assertThat(window.runsLow(4, false)).isTrue();
    assertThat(window.keepsAhead(true)).as("while stopping").isFalse();

    call(window, 4, 1, 50, 200);
    assertThat(window.runsLow(4, false)).as("a full window").isFalse();
  }

  @Test
  void oneCallAtATime() {
    PlanWindow window = window(100, 0);

    assertThat(window.nextCall(4, false)).isPresent();
    assertThat(window.underWay()).isTrue();
    assertThat(window.nextCall(4, false)).isEmpty();
    assertThat(window.takePlanned()).isEmpty();

    window.planned(new PlanPage(25, false, null), null);
    assertThat(window.hasPlanned()).isTrue();
    assertThat(window.underWay()).as("until its outcome is handled").isTrue();
    assertThat(window.takePlanned()).isPresent();

    assertThat(window.hasPlanned()).isFalse();
    assertThat(window.underWay()).isFalse();
    assertThat(window.nextCall(4, false)).isPresent();
  }

  @Test
  void noCallWhileAStopIsUnderWay() {
    PlanWindow window = window(100, 0);

    assertThat(window.nextCall(4, true)).isEmpty();
    assertThat(window.underWay()).isFalse();
  }

  @Test
  void aPageSaysWhetherBatchesMayBePending() {
    PlanWindow window = window(100, 10_000);

    assertThat(window.takePage(new PlanPage(3, false, null, -1), 0, 4)).isTrue();
    assertThat(window.takePage(new PlanPage(0, false, null, 5), 1, 4))
        .as("a full window, nothing planned")
        .isTrue();
    assertThat(window.takePage(new PlanPage(0, false, null, 0), 2, 4)).isFalse();
    assertThat(window.takePage(new PlanPage(0, true, 0L, -1), 3, 4)).isFalse();
  }

  @Test
  void aPageThatPlannedTheLastKeysEndsPlanning() {
    PlanWindow window = window(100, 10_000);
    call(window, 4, 0, 50, 150);

    window.nextCall(4, false).orElseThrow();
    window.planned(new PlanPage(10, true, 1_000L, 160), null);
    window.takePage(window.takePlanned().orElseThrow().page(), 1, 4);

    assertThat(window.done()).isTrue();
    assertThat(window.over()).isTrue();
    assertThat(window.keepsAhead(false)).isFalse();
    assertThat(window.nextCall(4, false)).isEmpty();
  }

  @Test
  void aPlanDoneBeforeThisExecutionAsksForNoCall() {
    PlanWindow window = new PlanWindow(RUN, 100, 0, true, () -> null);

    assertThat(window.over()).isTrue();
    assertThat(window.nextCall(4, false)).isEmpty();

    window.setDone(false);
    assertThat(window.nextCall(4, false)).isPresent();
  }

  @Test
  void aFailedCallStopsPlanningUntilTheErrorIsCleared() {
    PlanWindow window = window(100, 10_000);
    call(window, 4, 0, 50, 150);
    window.nextCall(4, false).orElseThrow();
    RuntimeException failure = new IllegalStateException("scope query failed");
    window.planned(null, failure);

    assertThat(window.takePlanned().orElseThrow().failure()).isSameAs(failure);
    window.fail("planning failed: scope query failed");

    assertThat(window.error()).isEqualTo("planning failed: scope query failed");
    assertThat(window.over()).isTrue();
    assertThat(window.keepsAhead(false)).isFalse();
    assertThat(window.nextCall(4, false)).isEmpty();

    window.clearError();
    assertThat(window.over()).isFalse();
    assertThat(window.keepsAhead(false)).isTrue();
    assertThat(window.nextCall(4, false)).isPresent();
  }
}

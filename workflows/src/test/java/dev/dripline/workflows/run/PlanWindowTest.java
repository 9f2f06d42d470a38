package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.workflows.run.RunTransitions.Step;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The planning window ({@link PlanWindow}) and the rules that move it ({@link PlanRules}): what
 * each call asks for, when one starts, and what its answer does to the window.
 */
class PlanWindowTest {
  private static final long RUN = 7;

  /** A running run's state whose planning the tests drive through the rules, as the loop does. */
  private static final class Planner {
    RunState state;

    Planner(int planPageBatches, long chainMillis, int cap, boolean done) {
      RunSettings settings =
          new RunSettings(
              RUN,
              true,
              "b",
              RunStatus.RUNNING,
              10,
              null,
              null,
              10_000,
              null,
              Instant.EPOCH,
              null,
              0,
              done,
              new BatchPolicy(1_000, 1_000, 3, 100, 1_000),
              planPageBatches,
              1_000,
              chainMillis,
              false,
              60_000,
              false);
      state = take(RunState.initial(0), new RunEvent.Begin(RUN));
      state = take(state, new RunEvent.Loaded(settings)).countedAgainst(cap);
    }

    private RunState take(RunState s, RunEvent event) {
      return step(s, event).state();
    }

    private Step step(RunState s, RunEvent event) {
      return RunTransitions.on(s, event);
    }

    /** Takes {@code event}; returns the commands it led to. */
    List<RunCommand> on(RunEvent event) {
      Step step = step(state, event);
      state = step.state();
      List<RunCommand> commands = new ArrayList<>();
      for (RunCommand command : step.commands()) {
        if (command instanceof RunCommand.Then then) {
          commands.addAll(on(then.event()));
        } else {
          commands.add(command);
        }
      }
      return commands;
    }

    /** The call the loop's ask for the next page starts, if any. */
    Optional<PlanRequest> next() {
      return on(new RunEvent.PlanNext()).stream()
          .filter(RunCommand.StartPlanning.class::isInstance)
          .map(c -> ((RunCommand.StartPlanning) c).request())
          .findFirst();
    }

    /** Starts the next call and has it plan {@code created} batches, leaving {@code pending}. */
    PlanRequest call(long nowMillis, int created, int pending) {
      PlanRequest request = next().orElseThrow();
      on(new RunEvent.Planned(new PlanPage(created, false, null, pending), null, nowMillis));
      return request;
    }

    PlanWindow window() {
      return state.window();
    }

    boolean madeAPace() {
      return state.window().pace() != null;
    }
  }

  private static Planner planner(int planPageBatches, long chainMillis, int cap) {
    return new Planner(planPageBatches, chainMillis, cap, false);
  }

  @Test
  void withoutChainsCallsRampFromAQuarterPageToWholePages() {
    Planner p = planner(100, 0, 4);

    List<Integer> asked = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      PlanRequest request = p.call(i, 25, -1);
      assertThat(request.runId()).isEqualTo(RUN);
      assertThat(request.keepPending()).isZero();
      asked.add(request.maxBatches());
    }

    assertThat(asked).containsExactly(25, 50, 100, 100);
  }

  @Test
  void theRampNeverAsksForFewerThanTwiceTheCap() {
    Planner p = planner(100, 0, 20);

    assertThat(p.call(0, 40, -1).maxBatches()).isEqualTo(40);
    assertThat(p.call(1, 50, -1).maxBatches()).isEqualTo(50);
    assertThat(p.call(2, 100, -1).maxBatches()).isEqualTo(100);
  }

  @Test
  void aPageIsAtLeastTheCap() {
    Planner p = planner(5, 0, 8);

    assertThat(p.window().pageBatches(8)).isEqualTo(8);
    assertThat(p.call(0, 8, -1).maxBatches()).isEqualTo(8);
    assertThat(p.call(1, 8, -1).maxBatches()).isEqualTo(8);
  }

  @Test
  void aRunWithoutChainsKeepsNoWindowAndNeverMakesAPace() {
    Planner p = planner(100, 0, 4);

    p.call(0, 25, -1);
    p.state = p.state.with(p.window().lookSoon());

    assertThat(p.window().keepsAhead(false)).isFalse();
    assertThat(p.window().runsLow(4, false)).isFalse();
    assertThat(p.madeAPace()).isFalse();
  }

  @Test
  void withChainsTheFirstCallMakesThePace() {
    Planner p = planner(100, 10_000, 4);

    p.next();

    assertThat(p.madeAPace()).isTrue();
  }

  @Test
  void aPageThatReportsWhatIsPendingMakesThePaceEvenWithoutChains() {
    Planner p = planner(100, 0, 4);

    p.call(0, 25, 25);

    assertThat(p.madeAPace()).isTrue();
  }

  @Test
  void withChainsTheWindowIsTwoPagesOrSixteenPerSlotAndACallAsksForHalfOfIt() {
    assertThat(planner(100, 10_000, 4).window().size(4)).isEqualTo(200);
    Planner p = planner(100, 10_000, 16);
    assertThat(p.window().size(16)).isEqualTo(256);
    // Half the window of 256, ramped: a quarter (never under twice the cap), a half, then whole.
    List<Integer> asked = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      PlanRequest request = p.call(i, 10, 10);
      assertThat(request.keepPending()).isEqualTo(256);
      asked.add(request.maxBatches());
    }
    assertThat(asked).containsExactly(32, 64, 128, 128);
  }

  @Test
  void theChainsPaceWidensTheWindowToTwoSecondsOfWhatTheyTakeWithinItsBound() {
    PlanWindow window = PlanWindow.of(10, 10_000, false);

    assertThat(window.size(1, 0)).isEqualTo(20);
    assertThat(window.size(1, 0.5)).isEqualTo(1_000);
    assertThat(window.size(1, 10)).isEqualTo(PlanWindow.MAX_PACED);
    assertThat(window.size(1_000, 10)).isEqualTo(16_000);
  }

  @Test
  void reportsOfWhatThePlannerFoundPendingSizeTheWindowAndACapChangeForgetsIt() {
    Planner p = planner(10, 10_000, 1);

    // 20 pending at 0 ms; a second later 20 again after 20 added: the chains took 20.
    p.call(0, 20, 20);
    p.call(1_000, 20, 20);

    assertThat(p.window().size(1)).isEqualTo(40);
    p.on(new RunEvent.CapUpdate(1));
    assertThat(p.window().size(1)).isEqualTo(20);
    assertThat(p.window().lookEveryMillis()).isEqualTo(ChainPace.MIN_LOOK_MILLIS);
  }

  @Test
  void withChainsTheWindowIsKeptOnceThePlannerReportedWhatIsPending() {
    Planner p = planner(100, 10_000, 4);
    assertThat(p.window().keepsAhead(false)).isFalse();

    p.call(0, 50, 150);

    assertThat(p.window().keepsAhead(false)).isTrue();
    assertThat(p.window().runsLow(4, false)).isTrue();
    assertThat(p.window().keepsAhead(true)).as("while stopping").isFalse();
    assertThat(p.on(new RunEvent.KeepAhead()))
        .singleElement()
        .isInstanceOf(RunCommand.StartPlanning.class);

    p.on(new RunEvent.Planned(new PlanPage(50, false, null, 200), null, 1));
    assertThat(p.window().runsLow(4, false)).as("a full window").isFalse();
    assertThat(p.on(new RunEvent.KeepAhead())).isEmpty();
  }

  @Test
  void oneCallAtATimeUntilItsOutcomeIsHandled() {
    Planner p = planner(100, 0, 4);

    assertThat(p.next()).isPresent();
    assertThat(p.window().underWay()).isTrue();
    assertThat(p.next()).isEmpty();

    p.on(new RunEvent.Planned(new PlanPage(25, false, null), null, 0));

    assertThat(p.window().underWay()).isFalse();
    assertThat(p.next()).isPresent();
    assertThat(p.window().calls()).isEqualTo(2);
  }

  @Test
  void noCallWhileAStopIsUnderWay() {
    Planner p = planner(100, 0, 4);
    p.on(new RunEvent.Stop());

    assertThat(p.next()).isEmpty();
    assertThat(p.window().underWay()).isFalse();
    assertThat(p.on(new RunEvent.KeepAhead())).isEmpty();
  }

  @Test
  void aPageThatPlannedTheLastKeysEndsPlanning() {
    Planner p = planner(100, 10_000, 4);
    p.call(0, 50, 150);

    assertThat(p.next()).isPresent();
    p.on(new RunEvent.Planned(new PlanPage(10, true, 1_000L, 160), null, 1));

    assertThat(p.window().done()).isTrue();
    assertThat(p.window().over()).isTrue();
    assertThat(p.window().keepsAhead(false)).isFalse();
    assertThat(p.next()).isEmpty();
  }

  @Test
  void aPlanDoneBeforeThisExecutionAsksForNoCallUnlessTheCarryOverSaysOtherwise() {
    Planner p = new Planner(100, 0, 4, true);

    assertThat(p.window().over()).isTrue();
    assertThat(p.next()).isEmpty();

    p.on(
        new RunEvent.Continued(
            new RunCarryOver(4, false, false, false, false, null, 0, 0L, 0, null, null, null)));
    assertThat(p.next()).isPresent();
  }

  @Test
  void aFailedCallStopsPlanningUntilARetryReQueues() {
    Planner p = planner(100, 10_000, 4);
    p.call(0, 50, 150);
    assertThat(p.next()).isPresent();

    p.on(new RunEvent.Planned(null, "scope query failed", 1));

    assertThat(p.window().error()).isEqualTo("planning failed: scope query failed");
    assertThat(p.window().underWay()).isFalse();
    assertThat(p.window().over()).isTrue();
    assertThat(p.window().keepsAhead(false)).isFalse();
    assertThat(p.next()).isEmpty();

    p.on(new RunEvent.Requeued(new RequeueResult(1, RunStatus.RUNNING), RunStatus.RUNNING));
    assertThat(p.window().over()).isFalse();
    assertThat(p.window().keepsAhead(false)).isTrue();
    assertThat(p.next()).isPresent();
  }
}

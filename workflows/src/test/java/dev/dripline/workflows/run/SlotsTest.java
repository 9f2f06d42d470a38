package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The slots value of a run's state ({@link Slots}); the rules that use it are {@link LoopRules}'.
 */
class SlotsTest {
  private static BatchRef batch(int number) {
    return new BatchRef(number, number * 10L, number * 10L + 9, 10);
  }

  @Test
  void takingAndReleasingMakeNewSlotsAndLeaveTheOldOnesAsTheyWere() {
    Slots none = Slots.NONE.withCap(3);

    Slots one = none.take(batch(1), 1);
    Slots released = one.release(1);

    assertThat(none.isEmpty()).isTrue();
    assertThat(one.lanes()).isEqualTo(Map.of(1, 1));
    assertThat(released).isEqualTo(none);
  }

  @Test
  void slotsAreFreeOnlyWhileFewerThanTheCapAreHeldAndNeverNegative() {
    Slots slots = Slots.NONE.withCap(2).take(batch(1), 1);
    assertThat(slots.free()).isEqualTo(1);

    slots = slots.take(batch(2), 2).take(batch(3), 3);

    assertThat(slots.held()).isEqualTo(3);
    assertThat(slots.free()).isZero();
    assertThat(slots.withCap(5).free()).isEqualTo(2);
  }

  @Test
  void theLowestFreeLaneIsTheFirstGapOrTheOneAfterTheLast() {
    Slots slots = Slots.NONE.withCap(4);
    assertThat(slots.lowestFreeLane()).isEqualTo(1);

    slots = slots.take(batch(1), 1).take(batch(2), 3);
    assertThat(slots.lowestFreeLane()).isEqualTo(2);

    slots = slots.take(batch(3), 2);
    assertThat(slots.lowestFreeLane()).isEqualTo(4);
  }

  @Test
  void theLanesCannotBeChangedFromOutside() {
    Slots slots = Slots.NONE.take(batch(1), 1);

    assertThat(slots.lanes()).isUnmodifiable();
  }
}

package dev.dripline.workflows.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;

class SlotBookTest {
  private static BatchRef batch(int number) {
    return new BatchRef(number, number * 10L, number * 10L + 9, 10);
  }

  private static final BatchResult DONE = new BatchResult(BatchOutcome.COMPLETED, 10);

  private static SlotBook bookWithCap(int cap) {
    SlotBook slots = new SlotBook();
    slots.setCap(cap);
    return slots;
  }

  @Test
  void slotsAreFreeOnlyWhileFewerThanTheCapAreHeld() {
    SlotBook slots = bookWithCap(3);
    assertThat(slots.free()).isEqualTo(3);
    assertThat(slots.isEmpty()).isTrue();

    slots.take(batch(1));
    slots.take(batch(2));
    assertThat(slots.free()).isEqualTo(1);

    slots.take(batch(3));
    assertThat(slots.held()).isEqualTo(3);
    assertThat(slots.free()).isZero();
    assertThat(slots.isEmpty()).isFalse();
  }

  @Test
  void lanesAreTakenLowestFirstAndAFreedLaneIsReusedFirst() {
    SlotBook slots = bookWithCap(4);
    assertThat(slots.take(batch(1))).isEqualTo(1);
    assertThat(slots.take(batch(2))).isEqualTo(2);
    assertThat(slots.take(batch(3))).isEqualTo(3);

    slots.completed(batch(2), DONE, null);
    slots.nextCompletion();

    assertThat(slots.take(batch(4))).isEqualTo(2);
    assertThat(slots.take(batch(5))).isEqualTo(4);
  }

  @Test
  void aReceivedCompletionHoldsItsSlotUntilItIsHandled() {
    SlotBook slots = bookWithCap(2);
    slots.take(batch(1));
    slots.take(batch(2));

    slots.completed(batch(1), DONE, null);

    assertThat(slots.hasCompletions()).isTrue();
    assertThat(slots.held()).isEqualTo(2);
    assertThat(slots.free()).isZero();
  }

  @Test
  void aHandledCompletionFreesExactlyItsSlot() {
    SlotBook slots = bookWithCap(3);
    slots.take(batch(7));
    slots.take(batch(8));
    slots.take(batch(9));
    RuntimeException failure = new IllegalStateException("boom");

    slots.completed(batch(8), null, failure);
    SlotBook.Completion completion = slots.nextCompletion();

    assertThat(completion).isEqualTo(new SlotBook.Completion(batch(8), 2, null, failure));
    assertThat(slots.held()).isEqualTo(2);
    assertThat(slots.free()).isEqualTo(1);
    assertThat(slots.hasCompletions()).isFalse();
    // Lanes 1 and 3 are still held by batches 7 and 9.
    assertThat(slots.take(batch(10))).isEqualTo(2);
    assertThat(slots.take(batch(11))).isEqualTo(4);
  }

  @Test
  void completionsAreHandledInTheOrderTheyCame() {
    SlotBook slots = bookWithCap(3);
    slots.take(batch(1));
    slots.take(batch(2));
    slots.take(batch(3));

    slots.completed(batch(3), DONE, null);
    slots.completed(batch(1), DONE, null);

    assertThat(slots.nextCompletion().batch()).isEqualTo(batch(3));
    assertThat(slots.nextCompletion().batch()).isEqualTo(batch(1));
    assertThat(slots.hasCompletions()).isFalse();
    assertThatThrownBy(slots::nextCompletion).isInstanceOf(NoSuchElementException.class);
  }

  @Test
  void loweringTheCapTakesNoSlotAwayButLeavesNoneFreeUntilUnderIt() {
    SlotBook slots = bookWithCap(4);
    for (int number = 1; number <= 4; number++) {
      slots.take(batch(number));
    }

    slots.setCap(2);
    assertThat(slots.held()).isEqualTo(4);
    assertThat(slots.free()).isZero();

    slots.completed(batch(1), DONE, null);
    slots.completed(batch(2), DONE, null);
    slots.nextCompletion();
    slots.nextCompletion();
    assertThat(slots.held()).isEqualTo(2);
    assertThat(slots.free()).isZero();

    slots.completed(batch(4), DONE, null);
    slots.nextCompletion();
    assertThat(slots.free()).isEqualTo(1);
    assertThat(slots.take(batch(5))).isEqualTo(1);
  }

  @Test
  void raisingTheCapFreesSlotsAtOnce() {
    SlotBook slots = bookWithCap(1);
    slots.take(batch(1));
    assertThat(slots.free()).isZero();

    slots.setCap(3);

    assertThat(slots.free()).isEqualTo(2);
    assertThat(slots.take(batch(2))).isEqualTo(2);
  }

  @Test
  void aHandedBackBatchGoesOnInItsChainsLane() {
    SlotBook slots = bookWithCap(3);
    slots.take(batch(1));
    slots.take(batch(2));
    slots.take(batch(3));
    slots.completed(batch(2), DONE, null);
    SlotBook.Completion chain = slots.nextCompletion();

    assertThat(slots.take(batch(40), chain.lane())).isEqualTo(2);

    assertThat(slots.held()).isEqualTo(3);
    slots.completed(batch(40), DONE, null);
    assertThat(slots.nextCompletion().lane()).isEqualTo(2);
  }

  @Test
  void aHandedBackBatchKeepsItsLaneEvenOverALoweredCap() {
    // Its chain's slot is held in PostgreSQL; the chain, not a new claim, holds it.
    SlotBook slots = bookWithCap(2);
    slots.take(batch(1));
    slots.take(batch(2));
    slots.setCap(1);
    slots.completed(batch(2), DONE, null);
    SlotBook.Completion chain = slots.nextCompletion();

    slots.take(batch(40), chain.lane());

    assertThat(slots.held()).isEqualTo(2);
    assertThat(slots.free()).isZero();
  }

  @Test
  void aNewBookHoldsNothingUnderACapOfOne() {
    SlotBook slots = new SlotBook();

    assertThat(slots.cap()).isEqualTo(1);
    assertThat(slots.held()).isZero();
    assertThat(slots.free()).isEqualTo(1);
    assertThat(slots.hasCompletions()).isFalse();
  }
}

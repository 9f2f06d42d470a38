package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The attempt's fence: when an unrenewed lease stops it, and which fences are final. */
class BatchAttemptTest {
  private static final long SECOND = 1_000_000_000L;

  private final BatchAttempt attempt = new BatchAttempt("test", Duration.ofSeconds(30));

  @Test
  void aLeaseUnconfirmedForTwoThirdsOfItsLengthFencesTheAttempt() {
    attempt.hold(4, 0);

    attempt.checkLease(20 * SECOND);
    assertThat(attempt.mayContinue()).isTrue();

    attempt.checkLease(20 * SECOND + 1);
    assertThat(attempt.fenced()).isEqualTo(BatchAttempt.Fence.LEASE_NOT_RENEWED);
    assertThat(attempt.mayAwaitDatabase()).isTrue();
  }

  @Test
  void aConfirmedRenewalPostponesTheFenceOnlyForTheBatchItRenewed() {
    attempt.hold(4, 0);
    attempt.confirmed(4, 10 * SECOND);
    attempt.confirmed(5, 25 * SECOND); // a renewal of a batch the attempt no longer holds

    attempt.checkLease(29 * SECOND);
    assertThat(attempt.mayContinue()).isTrue();
    attempt.checkLease(31 * SECOND);
    assertThat(attempt.mayContinue()).isFalse();
  }

  @Test
  void anAttemptHoldingNoBatchIsNeverFencedForItsLease() {
    attempt.hold(4, 0);
    attempt.release();

    attempt.checkLease(3_600 * SECOND);

    assertThat(attempt.mayContinue()).isTrue();
  }

  @Test
  void aLeaseFenceIsLiftedByARenewalButATimeoutIsFinal() {
    attempt.hold(4, 0);
    attempt.checkLease(21 * SECOND);
    assertThat(attempt.unfence(22 * SECOND)).isTrue();
    assertThat(attempt.mayContinue()).isTrue();

    attempt.fence(BatchAttempt.Fence.TIMED_OUT);
    attempt.fence(BatchAttempt.Fence.LEASE_NOT_RENEWED);

    assertThat(attempt.fenced()).isEqualTo(BatchAttempt.Fence.TIMED_OUT);
    assertThat(attempt.unfence(23 * SECOND)).isFalse();
    assertThat(attempt.mayAwaitDatabase()).isFalse();
  }

  @Test
  void aFenceInterruptsTheThreadRunningTheAttemptOnlyWhileItRuns() {
    attempt.begin(1);
    attempt.fence(BatchAttempt.Fence.REJECTED);
    assertThat(Thread.currentThread().isInterrupted()).isTrue();
    attempt.end();
    assertThat(Thread.currentThread().isInterrupted()).isFalse();

    BatchAttempt over = new BatchAttempt("over", Duration.ofSeconds(30));
    over.begin(1);
    over.end();
    over.fence(BatchAttempt.Fence.REJECTED);
    assertThat(Thread.interrupted()).isFalse();
  }
}

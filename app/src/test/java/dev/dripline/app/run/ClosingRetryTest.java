package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A signal refused while the run's workflow continues as new is sent again (F5, full size). */
class ClosingRetryTest {
  private static RuntimeException closing() {
    return new RuntimeException(
        "signal failed",
        new StatusRuntimeException(
            Status.RESOURCE_EXHAUSTED.withDescription(
                "workflow operation can not be applied because workflow is closing")));
  }

  @Test
  void aSignalRefusedBecauseTheWorkflowWasClosingIsSentAgain() {
    AtomicInteger tries = new AtomicInteger();

    String answer =
        ClosingRetry.call(
            () -> {
              if (tries.incrementAndGet() < 3) {
                throw closing();
              }
              return "delivered";
            });

    assertThat(answer).isEqualTo("delivered");
    assertThat(tries).hasValue(3);
  }

  @Test
  void otherFailuresAreNotRetried() {
    AtomicInteger tries = new AtomicInteger();
    RuntimeException unavailable =
        new RuntimeException(new StatusRuntimeException(Status.UNAVAILABLE));

    assertThatThrownBy(
            () ->
                ClosingRetry.call(
                    () -> {
                      tries.incrementAndGet();
                      throw unavailable;
                    }))
        .isSameAs(unavailable);
    assertThat(tries).hasValue(1);
  }

  @Test
  void aWorkflowThatStaysClosingIsGivenUpAfterTheLastPause() {
    AtomicInteger tries = new AtomicInteger();

    assertThatThrownBy(
            () ->
                ClosingRetry.call(
                    () -> {
                      tries.incrementAndGet();
                      throw closing();
                    }))
        .satisfies(e -> assertThat(ClosingRetry.isClosing(e)).isTrue());
    assertThat(tries).hasValue(ClosingRetry.PAUSES_MILLIS.length + 1);
  }
}

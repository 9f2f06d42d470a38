package dev.dripline.activities.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.workflows.run.DriplineFailure;
import io.temporal.failure.ApplicationFailure;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class DefinitionWaitTest {
  private static final Instant SINCE = Instant.parse("2026-01-01T00:00:00Z");
  private final DefinitionWait wait = new DefinitionWait(Duration.ofMinutes(10));

  private ApplicationFailure after(Duration waited) {
    return wait.notHosted("shop.orders", SINCE, SINCE.plus(waited));
  }

  @Test
  void aTaskThatBeganToWaitIsRetriedAfterASecond() {
    ApplicationFailure failure = after(Duration.ZERO);

    assertThat(failure.isNonRetryable()).isFalse();
    assertThat(failure.getType()).isEqualTo(DriplineFailure.DEFINITION_NOT_HOSTED.name());
    assertThat(failure.getNextRetryDelay()).isEqualTo(Duration.ofSeconds(1));
    assertThat(failure.getOriginalMessage())
        .isEqualTo(
            "no backfill definition named shop.orders is registered in this worker; waiting up to"
                + " 10m for a worker that hosts it");
  }

  @Test
  void theDelayGrowsWithTheWaitUpToThirtySeconds() {
    assertThat(after(Duration.ofSeconds(4)).getNextRetryDelay()).isEqualTo(Duration.ofSeconds(4));
    assertThat(after(Duration.ofMinutes(2)).getNextRetryDelay()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void theLastDelayEndsWithTheWait() {
    ApplicationFailure failure = after(Duration.ofMinutes(10).minusSeconds(5));

    assertThat(failure.isNonRetryable()).isFalse();
    assertThat(failure.getNextRetryDelay()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void onceTheWaitIsOverTheTaskFailsForGoodNamingTheDefinitionAndTheWait() {
    ApplicationFailure failure = after(Duration.ofMinutes(10));

    assertThat(failure.isNonRetryable()).isTrue();
    assertThat(failure.getType()).isEqualTo(DriplineFailure.UNKNOWN_BACKFILL.name());
    assertThat(failure.getOriginalMessage())
        .isEqualTo(
            "no backfill definition named shop.orders is registered in the workers that took this"
                + " task, and no worker that hosts it took it within 10m"
                + " (dripline.engine.unknown-backfill-wait)");
  }

  @Test
  void aWaitOfZeroFailsAtOnce() {
    ApplicationFailure failure =
        new DefinitionWait(Duration.ZERO).notHosted("shop.orders", SINCE, SINCE);

    assertThat(failure.isNonRetryable()).isTrue();
    assertThat(failure.getOriginalMessage()).contains("within 0s");
  }

  @Test
  void durationsReadAsConfigured() {
    assertThat(DefinitionWait.text(Duration.ofMinutes(10))).isEqualTo("10m");
    assertThat(DefinitionWait.text(Duration.ofSeconds(90))).isEqualTo("90s");
    assertThat(DefinitionWait.text(Duration.ofMillis(250))).isEqualTo("250ms");
  }
}

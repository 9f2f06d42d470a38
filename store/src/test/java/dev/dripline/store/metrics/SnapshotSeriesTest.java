package dev.dripline.store.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SnapshotSeriesTest {
  @Test
  void labelsRoundTripEvenWithCommasAndBackslashesInValues() {
    String text = SnapshotSeries.labels("backfill", "odd,name\\x=y", "outcome", "failed");

    assertThat(SnapshotSeries.parseLabels(text))
        .containsExactly(Map.entry("backfill", "odd,name\\x=y"), Map.entry("outcome", "failed"));
  }

  @Test
  void plainLabelsKeepTheirCanonicalText() {
    assertThat(SnapshotSeries.labels("backfill", "example.sleep", "outcome", "completed"))
        .isEqualTo("backfill=example.sleep,outcome=completed");
    assertThat(SnapshotSeries.label("state", "primed")).isEqualTo("state=primed");
    assertThat(SnapshotSeries.parseLabels("")).isEmpty();
  }
}

package dev.dripline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

class ProgressLineTest {
  private static JsonNode run(String json) throws Exception {
    return ApiClient.JSON.readTree(json);
  }

  @Test
  void barFillsItsShareOfTheWidth() {
    assertThat(ProgressLine.bar(0, 10)).isEqualTo("[----------]");
    assertThat(ProgressLine.bar(45, 10)).isEqualTo("[####------]");
    assertThat(ProgressLine.bar(100, 10)).isEqualTo("[##########]");
    assertThat(ProgressLine.bar(130, 4)).isEqualTo("[####]");
    assertThat(ProgressLine.bar(-5, 4)).isEqualTo("[----]");
  }

  @Test
  void aRunningRunShowsPercentKeysThroughputAndEta() throws Exception {
    String line =
        ProgressLine.of(
            run(
                """
                {"id": 7, "status": "running", "throttle": {"throttled": false, "reasons": []},
                 "progress": {"totalKeys": 12000, "processedKeys": 3600, "percent": 30,
                              "throughputPerMinute": 1234.4, "etaSeconds": 245,
                              "elapsedSeconds": 175}}
                """));

    assertThat(line)
        .isEqualTo(
            "run 7 running  [#########---------------------]   30%  3,600/12,000 keys"
                + "  1,234/min  ETA 4m05s");
  }

  @Test
  void anEndedRunShowsHowLongItTookInsteadOfAnEta() throws Exception {
    String line =
        ProgressLine.of(
            run(
                """
                {"id": 8, "status": "completed", "throttle": null,
                 "progress": {"totalKeys": 60, "processedKeys": 60, "percent": 100,
                              "throughputPerMinute": 7.25, "etaSeconds": null,
                              "elapsedSeconds": 3725}}
                """));

    assertThat(line).endsWith("100%  60/60 keys  7.3/min  took 1h02m").doesNotContain("ETA");
  }

  @Test
  void anUnplannedRunHasUnknownTotalAndEtaAndAThrottledOneNamesItsHolds() throws Exception {
    String line =
        ProgressLine.of(
            run(
                """
                {"id": 9, "status": "running",
                 "throttle": {"throttled": true, "since": "2026-12-07T00:00:00Z",
                              "reasons": [{"check": "brake", "value": null, "threshold": null},
                                          {"check": "replica-lag", "value": 12.0,
                                           "threshold": 10.0}]},
                 "progress": {"totalKeys": null, "processedKeys": 0, "percent": 0,
                              "throughputPerMinute": 0.0, "etaSeconds": null,
                              "elapsedSeconds": 4}}
                """));

    assertThat(line)
        .contains("0/? keys", "0.0/min", "ETA ?")
        .endsWith("held by brake, replica-lag");
  }

  @Test
  void figuresReadForPeople() {
    assertThat(Figures.duration(0)).isEqualTo("0s");
    assertThat(Figures.duration(59)).isEqualTo("59s");
    assertThat(Figures.duration(60)).isEqualTo("1m00s");
    assertThat(Figures.duration(3_599)).isEqualTo("59m59s");
    assertThat(Figures.duration(3_600)).isEqualTo("1h00m");
    assertThat(Figures.duration(90_000)).isEqualTo("1d01h");
    assertThat(Figures.perMinute(99.94)).isEqualTo("99.9");
    assertThat(Figures.perMinute(100)).isEqualTo("100");
    assertThat(Figures.count(1_234_567)).isEqualTo("1,234,567");
  }

  @Test
  void aPageFooterCountsRowsAndNamesTheNextPage() throws Exception {
    assertThat(ApiCommand.pageFooter(run("{\"page\": 0, \"size\": 20, \"total\": 45}"), "runs"))
        .isEqualTo("runs 1–20 of 45 (next: --page 1)");
    assertThat(ApiCommand.pageFooter(run("{\"page\": 2, \"size\": 20, \"total\": 45}"), "runs"))
        .isEqualTo("runs 41–45 of 45");
    assertThat(ApiCommand.pageFooter(run("{\"page\": 5, \"size\": 20, \"total\": 45}"), "runs"))
        .isEqualTo("no runs on page 5 (45 in all)");
  }
}

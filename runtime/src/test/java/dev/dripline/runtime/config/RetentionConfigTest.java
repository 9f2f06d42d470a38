package dev.dripline.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.micronaut.context.ApplicationContext;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code DRIPLINE_RETENTION} and the purge's settings, as the configuration binds them. */
class RetentionConfigTest {

  private static RetentionConfig bound(Map<String, Object> properties) {
    try (ApplicationContext context = ApplicationContext.run(properties)) {
      return context.getBean(RetentionConfig.class);
    }
  }

  @Test
  void defaultsKeepThirtyDaysAndPurgeHourlyInChunksOfFiveThousand() {
    RetentionConfig config = bound(Map.of());

    assertThat(config.period()).isEqualTo(Duration.ofDays(30));
    assertThat(config.chunkSize()).isEqualTo(5000);
    assertThat(config.interval()).isEqualTo(Duration.ofHours(1));
    assertThat(config.schedule()).isTrue();
  }

  @Test
  void theRetentionIsADurationInTheProjectsStyleOrIso8601() {
    assertThat(bound(Map.of("dripline.retention.period", "7d")).period())
        .isEqualTo(Duration.ofDays(7));
    assertThat(bound(Map.of("dripline.retention.period", "P45D")).period())
        .isEqualTo(Duration.ofDays(45));
    assertThat(bound(Map.of("dripline.retention.period", "PT36H")).period())
        .isEqualTo(Duration.ofHours(36));
  }
}

package dev.dripline.activities.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import jakarta.inject.Inject;
import java.util.List;
import org.junit.jupiter.api.Test;

@MicronautTest(environments = "test", startApplication = false, transactional = false)
class OptionSchemaJsonIT {
  @Inject OptionSchemaJson schemaJson;

  @Test
  void everyOptionKindRoundTrips() {
    List<OptionSpec> options =
        List.of(
            OptionSpec.required("count", OptionType.INTEGER, "how many").atLeast(1),
            OptionSpec.withDefault("ratio", OptionType.DECIMAL, "0.5", "a share"),
            OptionSpec.withDefault("dryRun", OptionType.BOOLEAN, false, "only report"),
            OptionSpec.optional("day", OptionType.DATE, null),
            OptionSpec.optional("after", OptionType.DATETIME, "from when"),
            OptionSpec.oneOf("mode", List.of("fast", "safe"), "safe", "how"));

    String json = schemaJson.write(options);
    List<OptionSpec> back = schemaJson.read(json);

    assertThat(back).isEqualTo(options);
    assertThat(json)
        .contains("\"type\":\"enum\"")
        .contains("\"allowedValues\":[\"fast\",\"safe\"]");
  }
}

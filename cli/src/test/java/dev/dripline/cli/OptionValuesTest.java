package dev.dripline.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

class OptionValuesTest {
  private static final CommandSpec SPEC = new CommandLine(CommandSpec.create()).getCommandSpec();

  private static JsonNode definition() throws Exception {
    return ApiClient.JSON.readTree(
        """
        {"name": "example.x", "options": [
          {"name": "items", "type": "integer"}, {"name": "ratio", "type": "decimal"},
          {"name": "dry", "type": "boolean"}, {"name": "from", "type": "date"},
          {"name": "label", "type": "string"}]}
        """);
  }

  @Test
  void valuesAreTypedAsTheCatalogueDeclaresThem() throws Exception {
    JsonNode options =
        OptionValues.parse(
            List.of("items=200", "ratio=0.5", "dry=true", "from=2026-01-01", "label=42", "new=7"),
            definition(),
            SPEC);

    assertThat(options.toString())
        .isEqualTo(
            "{\"items\":200,\"ratio\":0.5,\"dry\":true,\"from\":\"2026-01-01\",\"label\":\"42\","
                + "\"new\":\"7\"}");
  }

  @Test
  void aValueThatDoesNotReadAsItsTypeIsSentAsTextForTheApiToJudge() throws Exception {
    JsonNode options =
        OptionValues.parse(List.of("items=lots", "dry=yes", "ratio=half"), definition(), SPEC);

    assertThat(options.toString())
        .isEqualTo("{\"items\":\"lots\",\"dry\":\"yes\",\"ratio\":\"half\"}");
  }

  @Test
  void colonEqualsSendsJsonAsWrittenAndAValueMayHoldEquals() throws Exception {
    JsonNode options =
        OptionValues.parse(
            List.of("items:=\"200\"", "label=a=b", "tags:=[1,2]"), definition(), SPEC);

    assertThat(options.toString())
        .isEqualTo("{\"items\":\"200\",\"label\":\"a=b\",\"tags\":[1,2]}");
  }

  @Test
  void malformedArgumentsAreUsageErrors() throws Exception {
    JsonNode definition = definition();
    assertThatThrownBy(() -> OptionValues.parse(List.of("items"), definition, SPEC))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("name=value");
    assertThatThrownBy(() -> OptionValues.parse(List.of("=5"), definition, SPEC))
        .isInstanceOf(ParameterException.class);
    assertThatThrownBy(() -> OptionValues.parse(List.of("items=1", "items=2"), definition, SPEC))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("twice");
    assertThatThrownBy(() -> OptionValues.parse(List.of("items:={"), definition, SPEC))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("JSON");
  }
}

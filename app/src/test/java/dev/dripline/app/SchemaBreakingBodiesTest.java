package dev.dripline.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SchemaBreakingBodiesTest {
  @Test
  void anIntegerIsBrokenByOtherTypesAndBothBounds() {
    Map<String, String> values =
        SchemaBreakingBodies.breaking(Map.of("type", "integer", "minimum", 1, "maximum", 100));

    assertThat(values)
        .containsEntry("a string", "\"1\"")
        .containsEntry("a fraction", "1.5")
        .containsEntry("below its minimum", "0")
        .containsEntry("above its maximum", "101")
        .doesNotContainKey("beyond 64 bits");
  }

  @Test
  void aNumberIsBrokenPastItsBoundsByAFraction() {
    Map<String, String> values =
        SchemaBreakingBodies.breaking(Map.of("type", "number", "minimum", 0, "maximum", 100));

    assertThat(values)
        .containsEntry("below its minimum", "-0.5")
        .containsEntry("above its maximum", "100.5")
        .containsEntry("beyond a double", "1e309");
  }

  @Test
  void aStringIsBrokenByLengthPatternFormatAndEnum() {
    Map<String, String> values =
        SchemaBreakingBodies.breaking(
            Map.of(
                "type",
                "string",
                "minLength",
                2,
                "maxLength",
                3,
                "pattern",
                "^[a-z]+$",
                "format",
                "date-time",
                "enum",
                List.of("a", "b")));

    assertThat(values)
        .containsEntry("too short", "\"x\"")
        .containsEntry("too long", "\"xxxx\"")
        .containsEntry("off its pattern", "\"not a name!\"")
        .containsEntry("not a date-time", "\"yesterday\"")
        .containsEntry("an unknown enum value", "\"no-such-value\"")
        .containsEntry("a number", "7");
    assertThat(values.get("huge")).hasSize(SchemaBreakingBodies.HUGE + 2);
  }

  @Test
  void anArrayIsBrokenByTooFewItemsAndByOneBadItem() {
    Map<String, String> values =
        SchemaBreakingBodies.breaking(
            Map.of(
                "type",
                "array",
                "minItems",
                1,
                "items",
                Map.of("type", "string", "enum", List.of("a", "b"))));

    assertThat(values)
        .containsEntry("an object", "{}")
        .containsEntry("too few items", "[]")
        .containsEntry("an item a number", "[7]")
        .containsEntry("an item an unknown enum value", "[\"no-such-value\"]");
    assertThat(values.get("an item huge")).hasSize(SchemaBreakingBodies.HUGE + 4);
  }

  @Test
  void pathsNameTheCorpusFixtures() {
    assertThat(SchemaBreakingBodies.fixturePath("/api/runs/{id}")).isEqualTo("/api/runs/{run}");
    assertThat(SchemaBreakingBodies.fixturePath("/api/targets/{name}/live-batches"))
        .isEqualTo("/api/targets/{target}/live-batches");
    assertThat(SchemaBreakingBodies.fixturePath("/api/pools/{name}"))
        .isEqualTo("/api/pools/hostile-input");
  }

  @Test
  void everyBodyOfTheDocumentIsCovered() {
    List<SchemaBreakingBodies.Case> cases =
        SchemaBreakingBodies.of(OpenApiDocument.fromClasspath());

    assertThat(cases)
        .extracting(SchemaBreakingBodies.Case::route)
        .containsAll(SchemaBreakingBodies.BASES.keySet());
  }
}

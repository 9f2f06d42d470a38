package dev.dripline.app.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import io.micronaut.core.type.Argument;
import io.micronaut.serde.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The catalogue's option schema is read and written with lower-case type names. */
class OptionSchemaJsonTest {
  private final ObjectMapper json = ObjectMapper.getDefault();

  @Test
  void readsWireTypeNames() throws Exception {
    List<OptionSpec> schema =
        json.readValue(
            """
            [{"name":"items","type":"integer","required":true,"min":0},
             {"name":"mode","type":"enum","required":false,"defaultValue":"a",
              "allowedValues":["a","b"]},
             {"name":"at","type":"DATETIME","required":false}]
            """,
            Argument.listOf(OptionSpec.class));

    assertThat(schema)
        .extracting(OptionSpec::type)
        .containsExactly(OptionType.INTEGER, OptionType.ENUM, OptionType.DATETIME);
    assertThat(schema.get(0).min()).isZero();
    assertThat(schema.get(1).allowedValues()).containsExactly("a", "b");
  }

  @Test
  void writesWireTypeNames() throws Exception {
    String text =
        json.writeValueAsString(OptionSpec.required("items", OptionType.INTEGER, "how many"));

    assertThat(text).contains("\"type\":\"integer\"");
  }
}

package dev.dripline.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.List;
import java.util.regex.Pattern;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * A run's or target's options from {@code --option name=value} arguments, typed as the backfill's
 * catalogue entry declares each option ({@code GET /api/backfills}): an {@code integer} or {@code
 * decimal} that reads as a number is sent as a JSON number, a {@code boolean} {@code true} or
 * {@code false} as a JSON boolean, everything else (dates, durations, enums, unknown names, and a
 * value that does not read as its type) as a JSON string, so the API judges it and names the field
 * if it is wrong. {@code name:=json} sends the JSON value as written.
 */
final class OptionValues {
  private static final Pattern INTEGER = Pattern.compile("[-+]?\\d+");

  private OptionValues() {}

  /**
   * @param arguments the {@code name=value} and {@code name:=json} arguments, in order
   * @param definition the backfill's catalogue entry, or a missing node when it is not known
   * @throws ParameterException (a usage error) for an argument without {@code =}, a name given
   *     twice, or {@code :=} with text that is not JSON
   */
  static ObjectNode parse(List<String> arguments, JsonNode definition, CommandSpec spec) {
    ObjectNode options = JsonNodeFactory.instance.objectNode();
    for (String argument : arguments) {
      int equals = argument.indexOf('=');
      if (equals <= 0) {
        throw new ParameterException(
            spec.commandLine(), "--option needs name=value (or name:=json), got: " + argument);
      }
      boolean raw = argument.charAt(equals - 1) == ':';
      String name = argument.substring(0, raw ? equals - 1 : equals);
      String value = argument.substring(equals + 1);
      if (name.isEmpty()) {
        throw new ParameterException(spec.commandLine(), "--option without a name: " + argument);
      }
      if (options.has(name)) {
        throw new ParameterException(spec.commandLine(), "--option " + name + " given twice");
      }
      if (raw) {
        try {
          options.set(name, ApiClient.JSON.readTree(value));
        } catch (JsonProcessingException e) {
          throw new ParameterException(
              spec.commandLine(), "--option " + name + ":= needs JSON, got: " + value);
        }
      } else {
        options.set(name, typed(value, typeOf(definition, name)));
      }
    }
    return options;
  }

  /** The option's declared type ({@code integer}, {@code date}, ...), or {@code null}. */
  static String typeOf(JsonNode definition, String name) {
    for (JsonNode option : definition.path("options")) {
      if (name.equals(option.path("name").asText())) {
        return option.path("type").asText(null);
      }
    }
    return null;
  }

  /** {@code value} as the JSON value of an option of {@code type} (see the class comment). */
  static JsonNode typed(String value, String type) {
    JsonNodeFactory json = JsonNodeFactory.instance;
    if ("integer".equals(type) && INTEGER.matcher(value).matches()) {
      return json.numberNode(new BigDecimal(value).toBigInteger());
    }
    if ("decimal".equals(type)) {
      try {
        return json.numberNode(new BigDecimal(value));
      } catch (NumberFormatException e) {
        return json.textNode(value);
      }
    }
    if ("boolean".equals(type) && (value.equals("true") || value.equals("false"))) {
      return json.booleanNode(Boolean.parseBoolean(value));
    }
    return json.textNode(value);
  }

  /** The catalogue entry of {@code backfill}, or a missing node when there is none. */
  static JsonNode definition(ApiClient api, String backfill) {
    for (JsonNode definition : api.get("api/backfills").json()) {
      if (backfill.equals(definition.path("name").asText())) {
        return definition;
      }
    }
    return MissingNode.getInstance();
  }
}

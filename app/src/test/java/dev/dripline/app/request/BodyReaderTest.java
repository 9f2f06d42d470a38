package dev.dripline.app.request;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.store.catalogue.FieldError;
import io.micronaut.json.tree.JsonNode;
import io.micronaut.serde.ObjectMapper;
import io.micronaut.serde.annotation.Serdeable;
import io.micronaut.validation.validator.Validator;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BodyReaderTest {
  /** A body of every component type the reader knows. */
  @Serdeable
  record Sample(
      @NotNull(message = "is required") @NotBlank(message = "a blank is no name") String name,
      @Min(value = 1, message = "must be at least 1") Long count,
      Map<String, Object> options,
      Instant at,
      JsonNode payload) {}

  private final BodyReader reader =
      new BodyReader(ObjectMapper.getDefault(), Validator.getInstance());

  @Test
  void bindsEveryComponentType() {
    BoundBody<Sample> read =
        reader.read(
            """
            {"name":"n","count":2,"options":{"k":"v"},"at":"2030-01-01T00:00:00Z",
             "payload":{"a":[1]}}
            """,
            Sample.class);

    assertThat(read.errors()).isEmpty();
    assertThat(read.body().name()).isEqualTo("n");
    assertThat(read.body().count()).isEqualTo(2L);
    assertThat(read.body().options()).isEqualTo(Map.of("k", "v"));
    assertThat(read.body().at()).isEqualTo(Instant.parse("2030-01-01T00:00:00Z"));
    assertThat(read.body().payload().get("a").isArray()).isTrue();
  }

  @Test
  void aMissingFieldIsRequiredWhateverElseItFails() {
    // "a blank is no name" sorts first, so only the preference for @NotNull picks "is required".
    assertThat(reader.read("{}", Sample.class).errors())
        .containsExactly(new FieldError("name", "is required"));
    assertThat(reader.read("{\"name\":\" \"}", Sample.class).errors())
        .containsExactly(new FieldError("name", "a blank is no name"));
  }

  @Test
  void reportsUnknownFieldsThenOneErrorPerComponentInOrder() {
    BoundBody<Sample> read =
        reader.read(
            """
            {"zeta":1,"payload":"p","at":"soon","options":[],"count":0,"name":7,"alpha":2}
            """,
            Sample.class);

    assertThat(read.errors())
        .containsExactly(
            new FieldError(
                "zeta", "unknown field; known fields: [at, count, name, options, payload]"),
            new FieldError(
                "alpha", "unknown field; known fields: [at, count, name, options, payload]"),
            new FieldError("name", "must be a string"),
            new FieldError("count", "must be at least 1"),
            new FieldError("options", "must be a JSON object"),
            new FieldError("at", "must be an ISO-8601 instant such as 2026-01-31T12:00:00Z"),
            new FieldError("payload", "must be a JSON object"));
    assertThat(read.body().count()).isNull();
  }

  @Test
  void refusesWhatSerializationWouldCoerce() {
    assertThat(reader.read("{\"name\":\"n\",\"count\":\"10\"}", Sample.class).errors())
        .containsExactly(new FieldError("count", "must be an integer"));
    assertThat(reader.read("{\"name\":\"n\",\"count\":true}", Sample.class).errors())
        .containsExactly(new FieldError("count", "must be an integer"));
    assertThat(reader.read("{\"name\":\"n\",\"count\":1.5}", Sample.class).errors())
        .containsExactly(new FieldError("count", "must be an integer"));
    assertThat(reader.read("{\"name\":[\"n\"]}", Sample.class).errors())
        .containsExactly(new FieldError("name", "must be a string"));
    assertThat(reader.read("{\"name\":\"n\",\"at\":\"5\"}", Sample.class).errors())
        .extracting(FieldError::field)
        .containsExactly("at");
  }

  @Test
  void numbersBeyondALongAreOutOfRange() {
    assertThat(reader.read("{\"name\":\"n\",\"count\":1e309}", Sample.class).errors())
        .containsExactly(new FieldError("count", "is out of range"));
    assertThat(reader.read("{\"name\":\"n\",\"count\":9223372036854775808}", Sample.class).errors())
        .containsExactly(new FieldError("count", "is out of range"));
    assertThat(reader.read("{\"name\":\"n\",\"count\":9223372036854775807}", Sample.class).body())
        .extracting(Sample::count)
        .isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void throwsABodyThatIsNotOneStorableObject() {
    assertThatThrownBy(() -> reader.read("{\"name\":\"a\",\"name\":\"b\"}", Sample.class))
        .isInstanceOf(ValidationProblem.class)
        .hasMessageStartingWith("body: is not valid JSON: duplicate field 'name'");
    assertThatThrownBy(() -> reader.read("{\"name\":\"a\\u0000\"}", Sample.class))
        .isInstanceOfSatisfying(
            ValidationProblem.class,
            problem ->
                assertThat(problem.errors()).extracting(FieldError::field).containsExactly("name"));
  }
}

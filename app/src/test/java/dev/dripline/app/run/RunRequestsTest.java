package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.request.BodyReader;
import dev.dripline.app.request.BoundBody;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.workflows.run.RunStatus;
import io.micronaut.serde.ObjectMapper;
import io.micronaut.validation.validator.Validator;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RunRequestsTest {
  private final RunRequests requests =
      new RunRequests(new BodyReader(ObjectMapper.getDefault(), Validator.getInstance()));

  @Test
  void readsAFullCreationBody() {
    BoundBody<CreateRunRequest> read =
        requests.create(
            """
            {"backfill":"example.sleep","options":{"items":1000,"tag":"a"},"batchSize":10,
             "maxRecords":500,"maxParallelBatches":3,"startAt":"2030-01-31T12:00:00+01:00"}
            """,
            null);
    CreateRunRequest request = read.body();

    assertThat(read.errors()).isEmpty();
    assertThat(request.backfill()).isEqualTo("example.sleep");
    assertThat(request.options()).containsEntry("tag", "a").containsKey("items");
    assertThat(((Number) request.options().get("items")).longValue()).isEqualTo(1000);
    assertThat(request.batchSize()).isEqualTo(10L);
    assertThat(request.maxRecords()).isEqualTo(500L);
    assertThat(request.maxParallelBatches()).isEqualTo(3L);
    assertThat(request.startAt()).isEqualTo(Instant.parse("2030-01-31T11:00:00Z"));
  }

  @Test
  void keepsOptionsAsPlainJavaValues() {
    CreateRunRequest request =
        requests
            .create(
                """
                {"backfill":"b","options":{"a":null,"b":[1,"x"],"c":{"d":true},"e":1.5}}
                """,
                null)
            .body();

    assertThat(request.options())
        .containsEntry("a", null)
        .containsEntry("b", List.of(1, "x"))
        .containsEntry("c", Map.of("d", true))
        .containsEntry("e", 1.5);
  }

  @Test
  void leavesOptionalFieldsNullAndOptionsEmptyWhenAbsent() {
    BoundBody<CreateRunRequest> read =
        requests.create("{\"backfill\":\"b\",\"startAt\":null}", null);
    CreateRunRequest request = read.body();

    assertThat(read.errors()).isEmpty();
    assertThat(request.options()).isEmpty();
    assertThat(request.batchSize()).isNull();
    assertThat(request.maxRecords()).isNull();
    assertThat(request.maxParallelBatches()).isNull();
    assertThat(request.startAt()).isNull();
  }

  @Test
  void acceptsIntegralNumbersWrittenWithAFraction() {
    BoundBody<CreateRunRequest> read =
        requests.create("{\"backfill\":\"b\",\"batchSize\":10.0}", null);

    assertThat(read.errors()).isEmpty();
    assertThat(read.body().batchSize()).isEqualTo(10L);
  }

  @Test
  void reportsOneErrorPerBadField() {
    BoundBody<CreateRunRequest> request =
        requests.create(
            """
            {"backfill":"","options":"x","batchSize":3000000000,"maxRecords":-5,
             "maxParallelBatches":true,"startAt":"2030-13-01","extra":1}
            """,
            null);

    assertThat(request.errors())
        .extracting(FieldError::field)
        .containsExactlyInAnyOrder(
            "backfill",
            "options",
            "batchSize",
            "maxRecords",
            "maxParallelBatches",
            "startAt",
            "extra");
  }

  @Test
  void rejectsAValueOfAnotherJsonTypeRatherThanCoercingIt() {
    BoundBody<CreateRunRequest> read =
        requests.create(
            """
            {"backfill":7,"batchSize":"10","maxRecords":true,"maxParallelBatches":1.5,
             "startAt":"1767225600"}
            """,
            null);

    assertThat(read.errors())
        .containsExactly(
            new FieldError("backfill", "must be a string"),
            new FieldError("batchSize", "must be an integer"),
            new FieldError("maxRecords", "must be an integer"),
            new FieldError("maxParallelBatches", "must be an integer"),
            new FieldError("startAt", "must be an ISO-8601 instant such as 2026-01-31T12:00:00Z"));
  }

  @Test
  void namesTheRuleEachBadValueBreaks() {
    BoundBody<CreateRunRequest> read =
        requests.create(
            """
            {"backfill":" ","options":[],"batchSize":3000000000,"maxRecords":-5,
             "maxParallelBatches":99999999999999999999,"startAt":"2030-01-31T12:00:00"}
            """,
            null);

    assertThat(read.errors())
        .containsExactly(
            new FieldError("backfill", "must be a backfill name"),
            new FieldError("options", "must be a JSON object"),
            new FieldError("batchSize", "must be at most 2147483647"),
            new FieldError("maxRecords", "must be at least 1"),
            new FieldError("maxParallelBatches", "is out of range"),
            new FieldError("startAt", "must be an ISO-8601 instant such as 2026-01-31T12:00:00Z"));
    // A rejected field is not checked further (a blank backfill is not looked up).
    assertThat(read.body().backfill()).isNull();
    assertThat(read.body().batchSize()).isNull();
    assertThat(requests.create("{}", null).errors())
        .containsExactly(new FieldError("backfill", "is required"));
  }

  @Test
  void rejectsAFieldGivenTwice() {
    assertThatThrownBy(() -> requests.create("{\"backfill\":\"a\",\"backfill\":\"b\"}", null))
        .isInstanceOf(ValidationProblem.class)
        .hasMessageContaining("duplicate field 'backfill'");
  }

  @Test
  void rejectsMalformedJsonAsTheBodyField() {
    assertThatThrownBy(() -> requests.create("{\"backfill\":", null))
        .isInstanceOfSatisfying(
            ValidationProblem.class,
            problem ->
                assertThat(problem.errors()).extracting(FieldError::field).containsExactly("body"));
  }

  @Test
  void rejectsContentAfterTheObject() {
    assertThatThrownBy(() -> requests.create("{\"backfill\":\"b\"} {", null))
        .isInstanceOf(ValidationProblem.class)
        .hasMessageStartingWith("body: is not valid JSON: more follows the first value");
  }

  @Test
  void rejectsEveryStringPostgresqlCannotStoreAgainstItsField() {
    String body = "{\"backfill\":\"b\",\"options\":{\"tag\":\"a\\u0000\",\"list\":[\"\\ud800\"]}}";

    assertThatThrownBy(() -> requests.create(body, null))
        .isInstanceOfSatisfying(
            ValidationProblem.class,
            problem ->
                assertThat(problem.errors())
                    .extracting(FieldError::field)
                    .containsExactlyInAnyOrder("options.tag", "options.list[0]"));
  }

  @Test
  void rejectsABlankOrOverlongIdempotencyKey() {
    String body = "{\"backfill\":\"b\"}";

    assertThat(requests.create(body, " ").errors())
        .extracting(FieldError::field)
        .containsExactly("Idempotency-Key");
    assertThat(requests.create(body, "k".repeat(256)).errors())
        .extracting(FieldError::field)
        .containsExactly("Idempotency-Key");
    assertThat(requests.create(body, "k".repeat(255)).errors()).isEmpty();
  }

  @Test
  void readsAFailureBudgetBetweenZeroAndAHundredPercent() {
    BoundBody<CreateRunRequest> read =
        requests.create(
            "{\"backfill\":\"b\",\"maxFailedBatchesPercent\":5.5,\"failureBudgetMinBatches\":50}",
            null);

    assertThat(read.errors()).isEmpty();
    assertThat(read.body().maxFailedBatchesPercent()).isEqualTo(5.5);
    assertThat(read.body().failureBudgetMinBatches()).isEqualTo(50L);
    for (String edge : List.of("0", "100", "0.0", "100.0")) {
      assertThat(
              requests
                  .create("{\"backfill\":\"b\",\"maxFailedBatchesPercent\":" + edge + "}", null)
                  .errors())
          .as(edge)
          .isEmpty();
    }
  }

  @Test
  void readsANiceRatioFromZeroToAHundred() {
    for (String edge : List.of("0", "0.5", "1", "100", "100.0")) {
      BoundBody<CreateRunRequest> read =
          requests.create("{\"backfill\":\"b\",\"niceRatio\":" + edge + "}", null);
      assertThat(read.errors()).as(edge).isEmpty();
      assertThat(read.body().niceRatio()).as(edge).isEqualTo(Double.parseDouble(edge));
    }
    assertThat(requests.create("{\"backfill\":\"b\"}", null).body().niceRatio()).isNull();
  }

  @Test
  void rejectsANiceRatioOutsideZeroToAHundredOrNotANumber() {
    for (String bad : List.of("-0.5", "-1", "100.01", "1e9", "\"1\"", "true", "[1]", "{}")) {
      assertThat(requests.create("{\"backfill\":\"b\",\"niceRatio\":" + bad + "}", null).errors())
          .as(bad)
          .extracting(FieldError::field)
          .containsExactly("niceRatio");
    }
  }

  @Test
  void rejectsAFailureBudgetOutsideZeroToAHundredOrNotANumber() {
    for (String bad : List.of("-0.5", "100.01", "1e9", "\"5\"", "true", "[5]")) {
      assertThat(
              requests
                  .create("{\"backfill\":\"b\",\"maxFailedBatchesPercent\":" + bad + "}", null)
                  .errors())
          .as(bad)
          .extracting(FieldError::field)
          .containsExactly("maxFailedBatchesPercent");
    }
    for (String bad : List.of("0", "-1", "2147483648", "1.5", "\"20\"")) {
      assertThat(
              requests
                  .create("{\"backfill\":\"b\",\"failureBudgetMinBatches\":" + bad + "}", null)
                  .errors())
          .as(bad)
          .extracting(FieldError::field)
          .containsExactly("failureBudgetMinBatches");
    }
  }

  @Test
  void rejectsAStartOutsideTheYears1970To9999() {
    String body = "{\"backfill\":\"b\",\"startAt\":\"+10000-01-01T00:00:00Z\"}";

    assertThat(requests.create(body, null).errors())
        .containsExactly(
            new FieldError(
                "startAt", "must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z"));
    assertThat(requests.create(body.replace("+10000", "1969"), null).errors())
        .extracting(FieldError::field)
        .containsExactly("startAt");
    assertThat(requests.create(body.replace("+10000", "9999"), null).errors()).isEmpty();
  }

  @Test
  void rejectsUnknownQueryParameters() {
    assertThatThrownBy(() -> requests.runQuery(Set.of("limit", "size"), null, null, null, "5"))
        .isInstanceOfSatisfying(
            ValidationProblem.class,
            problem ->
                assertThat(problem.errors())
                    .extracting(FieldError::field)
                    .containsExactly("limit"));
  }

  @Test
  void readsACapChange() {
    assertThat(requests.capChange("{\"maxParallelBatches\":7}")).isEqualTo(7);
  }

  @Test
  void rejectsACapChangeWithoutACap() {
    assertThatThrownBy(() -> requests.capChange("{\"maxParallelBatches\":null}"))
        .isInstanceOfSatisfying(
            ValidationProblem.class,
            problem ->
                assertThat(problem.errors())
                    .containsExactly(new FieldError("maxParallelBatches", "is required")));
  }

  @Test
  void readsListParametersWithDefaults() {
    RunQuery query = requests.runQuery(Set.of(), "failed", "example.sleep", null, "");

    assertThat(query.status()).isEqualTo(RunStatus.FAILED);
    assertThat(query.backfill()).isEqualTo("example.sleep");
    assertThat(query.paging()).isEqualTo(new PageRequest(0, 20));
  }

  @Test
  void rejectsEveryBadListParameterAtOnce() {
    assertThatThrownBy(() -> requests.runQuery(Set.of(), "bogus", null, "-1", "1000"))
        .isInstanceOfSatisfying(
            ValidationProblem.class,
            problem ->
                assertThat(problem.errors())
                    .extracting(FieldError::field)
                    .containsExactly("status", "page", "size"));
  }

  @Test
  void runIdsArePositiveNumbers() {
    assertThat(RunRequests.runId("42")).hasValue(42);
    assertThat(RunRequests.runId("0")).isEmpty();
    assertThat(RunRequests.runId("4x")).isEmpty();
    assertThat(RunRequests.runId("99999999999999999999")).isEmpty();
  }

  @Test
  void problemSummaryNamesTheOnlyField() {
    ValidationProblem problem = ValidationProblem.of("batchSize", "must be at least 1");

    assertThat(problem.toProblem().detail()).isEqualTo("batchSize: must be at least 1");
    assertThat(problem.toProblem().status()).isEqualTo(400);
    assertThat(problem.toProblem().errors()).hasSize(1);
  }
}

package dev.dripline.app.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.catalogue.FieldError;
import dev.dripline.run.RunStatus;
import io.micronaut.serde.ObjectMapper;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RunRequestsTest {
  private final RunRequests requests = new RunRequests(ObjectMapper.getDefault());

  @Test
  void readsAFullCreationBody() {
    CreateRunRequest request =
        requests.create(
            """
            {"backfill":"example.sleep","options":{"items":1000,"tag":"a"},"batchSize":10,
             "maxRecords":500,"maxParallelBatches":3,"startAt":"2030-01-31T12:00:00+01:00"}
            """);

    assertThat(request.errors()).isEmpty();
    assertThat(request.backfill()).isEqualTo("example.sleep");
    assertThat(request.options()).containsEntry("tag", "a").containsKey("items");
    assertThat(((Number) request.options().get("items")).longValue()).isEqualTo(1000);
    assertThat(request.batchSize()).isEqualTo(10);
    assertThat(request.maxRecords()).isEqualTo(500L);
    assertThat(request.maxParallelBatches()).isEqualTo(3);
    assertThat(request.startAt()).isEqualTo(Instant.parse("2030-01-31T11:00:00Z"));
  }

  @Test
  void leavesOptionalFieldsNullAndOptionsEmptyWhenAbsent() {
    CreateRunRequest request = requests.create("{\"backfill\":\"b\",\"startAt\":null}");

    assertThat(request.errors()).isEmpty();
    assertThat(request.options()).isEmpty();
    assertThat(request.batchSize()).isNull();
    assertThat(request.maxRecords()).isNull();
    assertThat(request.maxParallelBatches()).isNull();
    assertThat(request.startAt()).isNull();
  }

  @Test
  void acceptsIntegralNumbersWrittenWithAFraction() {
    CreateRunRequest request = requests.create("{\"backfill\":\"b\",\"batchSize\":10.0}");

    assertThat(request.errors()).isEmpty();
    assertThat(request.batchSize()).isEqualTo(10);
  }

  @Test
  void reportsOneErrorPerBadField() {
    CreateRunRequest request =
        requests.create(
            """
            {"backfill":"","options":"x","batchSize":3000000000,"maxRecords":-5,
             "maxParallelBatches":true,"startAt":"2030-13-01","extra":1}
            """);

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
  void rejectsMalformedJsonAsTheBodyField() {
    assertThatThrownBy(() -> requests.create("{\"backfill\":"))
        .isInstanceOfSatisfying(
            ValidationProblem.class,
            problem ->
                assertThat(problem.errors()).extracting(FieldError::field).containsExactly("body"));
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
    RunQuery query = requests.runQuery("failed", "example.sleep", null, "");

    assertThat(query.status()).isEqualTo(RunStatus.FAILED);
    assertThat(query.backfill()).isEqualTo("example.sleep");
    assertThat(query.paging()).isEqualTo(new PageRequest(0, 20));
  }

  @Test
  void rejectsEveryBadListParameterAtOnce() {
    assertThatThrownBy(() -> requests.runQuery("bogus", null, "-1", "1000"))
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

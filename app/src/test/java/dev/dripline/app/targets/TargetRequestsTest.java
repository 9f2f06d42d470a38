package dev.dripline.app.targets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.request.BodyReader;
import dev.dripline.app.request.BoundBody;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.workflows.targets.TargetState;
import io.micronaut.serde.ObjectMapper;
import io.micronaut.validation.validator.Validator;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TargetRequestsTest {
  private final TargetRequests requests =
      new TargetRequests(
          new BodyReader(ObjectMapper.getDefault(), Validator.getInstance()),
          ObjectMapper.getDefault());

  @Test
  void readsAFullCreationBody() {
    BoundBody<CreateTargetRequest> read =
        requests.create(
            "{\"name\":\"acme.v2_x-1\",\"backfill\":\"example.copy-events\","
                + "\"options\":{\"tenant\":\"acme\"},\"group\":\"org-1\"}");
    CreateTargetRequest request = read.body();

    assertThat(read.errors()).isEmpty();
    assertThat(request.name()).isEqualTo("acme.v2_x-1");
    assertThat(request.backfill()).isEqualTo("example.copy-events");
    assertThat(request.options()).isEqualTo(Map.of("tenant", "acme"));
    assertThat(request.group()).isEqualTo("org-1");
  }

  @Test
  void aMissingGroupIsNoGroupAndMissingOptionsAreEmpty() {
    BoundBody<CreateTargetRequest> read = requests.create("{\"name\":\"a\",\"backfill\":\"b\"}");

    assertThat(read.errors()).isEmpty();
    assertThat(read.body().group()).isNull();
    assertThat(read.body().options()).isEmpty();
  }

  @Test
  void rejectsNamesOutsideTheCharsetOrLength() {
    BoundBody<CreateTargetRequest> read =
        requests.create(
            "{\"name\":\"" + "n".repeat(101) + "\",\"backfill\":\"b\",\"group\":\"a b\"}");

    assertThat(read.errors())
        .containsExactly(
            new FieldError("name", TargetRequests.NAME_RULE),
            new FieldError("group", TargetRequests.NAME_RULE));
  }

  @Test
  void aNameOfAnotherJsonTypeIsAnErrorOfItsField() {
    BoundBody<CreateTargetRequest> read =
        requests.create("{\"name\":7,\"backfill\":\"b\",\"group\":[\"g\"],\"extra\":1}");

    assertThat(read.errors())
        .containsExactly(
            new FieldError(
                "extra", "unknown field; known fields: [backfill, group, name, options]"),
            new FieldError("name", "must be a string"),
            new FieldError("group", "must be a string"));
    assertThat(read.body().name()).isNull();
  }

  @Test
  void keepsALiveBatchPayloadAsJson() {
    assertThat(requests.liveBatchPayload("{\"payload\":{\"id\":7,\"tags\":[\"a\"]}}"))
        .isEqualTo("{\"id\":7,\"tags\":[\"a\"]}");
  }

  @Test
  void aLiveBatchPayloadMustBeAnObject() {
    assertThatThrownBy(() -> requests.liveBatchPayload("{\"payload\":[1]}"))
        .isInstanceOfSatisfying(
            ValidationProblem.class,
            problem ->
                assertThat(problem.errors())
                    .containsExactly(new FieldError("payload", "must be a JSON object")));
    assertThatThrownBy(() -> requests.liveBatchPayload("{\"payload\":null}"))
        .isInstanceOfSatisfying(
            ValidationProblem.class,
            problem ->
                assertThat(problem.errors())
                    .containsExactly(new FieldError("payload", "is required: a JSON object")));
  }

  @Test
  void readsTheListFilters() {
    TargetQuery query = requests.targetQuery(Set.of(), "needs_resync", "org-1", null, "5");

    assertThat(query.state()).isEqualTo(TargetState.NEEDS_RESYNC);
    assertThat(query.group()).isEqualTo("org-1");
    assertThat(query.paging().size()).isEqualTo(5);
  }

  @Test
  void dryRunIsTrueOnlyWhenAskedFor() {
    assertThat(TargetRequests.dryRun(Set.of(), null)).isFalse();
    assertThat(TargetRequests.dryRun(Set.of(), "false")).isFalse();
    assertThat(TargetRequests.dryRun(Set.of(), "TRUE")).isTrue();
    assertThatThrownBy(() -> TargetRequests.dryRun(Set.of(), "yes"))
        .isInstanceOf(ValidationProblem.class);
  }

  @Test
  void theWorkflowSummaryNamesTargetBackfillAndGroup() {
    TargetRow row =
        new TargetRow(
            "acme",
            "example.copy-events",
            Map.of(),
            null,
            TargetState.PENDING_BACKFILL,
            0,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            0,
            null);

    assertThat(TargetWorkflows.summary(row)).isEqualTo("target acme · example.copy-events");
  }
}

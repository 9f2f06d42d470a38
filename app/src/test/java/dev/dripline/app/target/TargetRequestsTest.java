package dev.dripline.app.target;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.catalogue.FieldError;
import dev.dripline.target.TargetState;
import io.micronaut.serde.ObjectMapper;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TargetRequestsTest {
  private final TargetRequests requests = new TargetRequests(ObjectMapper.getDefault());

  @Test
  void readsAFullCreationBody() {
    CreateTargetRequest request =
        requests.create(
            "{\"name\":\"acme.v2_x-1\",\"backfill\":\"example.copy-events\","
                + "\"options\":{\"tenant\":\"acme\"},\"group\":\"org-1\"}");

    assertThat(request.errors()).isEmpty();
    assertThat(request.name()).isEqualTo("acme.v2_x-1");
    assertThat(request.backfill()).isEqualTo("example.copy-events");
    assertThat(request.options()).isEqualTo(Map.of("tenant", "acme"));
    assertThat(request.group()).isEqualTo("org-1");
  }

  @Test
  void aMissingGroupIsNoGroupAndMissingOptionsAreEmpty() {
    CreateTargetRequest request = requests.create("{\"name\":\"a\",\"backfill\":\"b\"}");

    assertThat(request.errors()).isEmpty();
    assertThat(request.group()).isNull();
    assertThat(request.options()).isEmpty();
  }

  @Test
  void rejectsNamesOutsideTheCharsetOrLength() {
    CreateTargetRequest request =
        requests.create(
            "{\"name\":\"" + "n".repeat(101) + "\",\"backfill\":\"b\",\"group\":\"a b\"}");

    assertThat(request.errors()).extracting(FieldError::field).containsExactly("name", "group");
    assertThat(request.name()).isNull();
  }

  @Test
  void keepsALiveBatchPayloadAsJson() {
    assertThat(requests.liveBatchPayload("{\"payload\":{\"id\":7,\"tags\":[\"a\"]}}"))
        .isEqualTo("{\"id\":7,\"tags\":[\"a\"]}");
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

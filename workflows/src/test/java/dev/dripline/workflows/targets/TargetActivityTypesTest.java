package dev.dripline.workflows.targets;

import static org.assertj.core.api.Assertions.assertThat;

import io.temporal.common.metadata.POJOActivityInterfaceMetadata;
import io.temporal.common.metadata.POJOActivityMethodMetadata;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The target workflow's histories name its activities by type: whatever interface declares them,
 * the types stay the ones running target workflows already recorded.
 */
class TargetActivityTypesTest {

  @Test
  void theTargetActivitiesKeepTheTypesRecordedInRunningWorkflows() {
    List<String> types =
        Stream.of(
                TargetRecordActivities.class,
                TargetPlanningActivities.class,
                LiveBatchActivities.class)
            .flatMap(
                type ->
                    POJOActivityInterfaceMetadata.newInstance(type).getMethodsMetadata().stream())
            .map(POJOActivityMethodMetadata::getActivityTypeName)
            .toList();

    assertThat(types)
        .containsExactlyInAnyOrder(
            "TargetLoad",
            "TargetAcquireCapacity",
            "TargetRecordPlanningFailure",
            "TargetObserveRun",
            "TargetReplan",
            "TargetPlan",
            "TargetAttemptPlanning",
            "TargetApplyLiveBatches");
  }
}

package dev.dripline.workflows;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dripline.workflows.run.BackfillRunWorkflowImpl;
import dev.dripline.workflows.run.Replays;
import dev.dripline.workflows.targets.TargetWorkflowImpl;
import io.temporal.common.WorkflowExecutionHistory;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Replays every history of every release ({@code histories/releases/<version>/*.json}, recorded
 * from that release's code) against today's run and target workflows: an execution a release began
 * must go on under the next one, so a change to the commands a workflow emits that is not behind
 * {@code Workflow.getVersion} fails here. A release adds its directory; this test finds it.
 */
class ReleaseHistoriesReplayTest {
  @Test
  void everyReleaseKeepsItsHistories() throws Exception {
    List<Path> releases = releases();

    assertThat(releases).as("release directories under %s", ReleaseHistories.RESOURCE).isNotEmpty();
    for (Path release : releases) {
      assertThat(histories(release))
          .as("histories of release %s", release.getFileName())
          .isNotEmpty();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("everyHistory")
  void replaysWithoutNonDeterminism(String name, Path file) throws Exception {
    WorkflowExecutionHistory history =
        WorkflowExecutionHistory.fromJson(Files.readString(file, StandardCharsets.UTF_8));
    assertThat(history.getEvents()).as(name).isNotEmpty();

    Replays.replay(history, BackfillRunWorkflowImpl.class, TargetWorkflowImpl.class);
  }

  static Stream<Object[]> everyHistory() throws Exception {
    Stream.Builder<Object[]> cases = Stream.builder();
    for (Path release : releases()) {
      for (Path file : histories(release)) {
        cases.add(new Object[] {release.getFileName() + "/" + file.getFileName(), file});
      }
    }
    return cases.build();
  }

  /** The releases' directories, by version. */
  private static List<Path> releases() throws Exception {
    URL root =
        ReleaseHistoriesReplayTest.class.getClassLoader().getResource(ReleaseHistories.RESOURCE);
    assertThat(root).as("test resource %s", ReleaseHistories.RESOURCE).isNotNull();
    try (Stream<Path> entries = Files.list(Path.of(root.toURI()))) {
      return entries.filter(Files::isDirectory).sorted().toList();
    }
  }

  /** The histories of one release. */
  private static List<Path> histories(Path release) throws Exception {
    try (Stream<Path> files = Files.list(release)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".json")).sorted().toList();
    }
  }
}

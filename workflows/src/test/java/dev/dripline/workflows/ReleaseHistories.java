package dev.dripline.workflows;

import java.nio.file.Path;
import java.util.Optional;

/**
 * Where a release's recorded histories are kept: {@code histories/releases/<version>/} in the test
 * resources, replayed by {@link ReleaseHistoriesReplayTest}. The tests that record histories write
 * a release's there when run with {@code -Ddripline.recordRelease=<version>}.
 */
public final class ReleaseHistories {
  /** The releases' directory, as a test resource. */
  public static final String RESOURCE = "histories/releases";

  private ReleaseHistories() {}

  /** The directory of the release being recorded, from the workflows module; empty if none is. */
  public static Optional<Path> recording() {
    String release = System.getProperty("dripline.recordRelease");
    if (release == null || release.isBlank()) {
      return Optional.empty();
    }
    return Optional.of(Path.of("src/test/resources", RESOURCE, release));
  }
}

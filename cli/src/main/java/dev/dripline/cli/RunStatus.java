package dev.dripline.cli;

import java.util.Set;

/** The run statuses the CLI acts on (docs/api.md). */
final class RunStatus {
  static final String COMPLETED = "completed";
  private static final Set<String> TERMINAL = Set.of(COMPLETED, "failed", "stopped");

  private RunStatus() {}

  /** Completed, failed or stopped: nothing more happens to the run unless it is retried. */
  static boolean isTerminal(String status) {
    return TERMINAL.contains(status);
  }
}

package dev.dripline.cli;

import java.util.List;

/**
 * Why a command could not do what it was asked: the lines to print on stderr and the exit code.
 * Thrown by {@link ApiClient} for an error answer or an unreachable server, and by a command that
 * finds the answer unusable.
 */
final class ApiFailure extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int exitCode;
  private final List<String> lines;

  ApiFailure(int exitCode, List<String> lines) {
    super(String.join("; ", lines));
    this.exitCode = exitCode;
    this.lines = List.copyOf(lines);
  }

  ApiFailure(int exitCode, String line) {
    this(exitCode, List.of(line));
  }

  int exitCode() {
    return exitCode;
  }

  /** What to print on stderr, one line each. */
  List<String> lines() {
    return lines;
  }
}

package dev.dripline.cli;

/**
 * The exit codes of {@code dripline}, for scripts (docs/cli.md). Picocli itself answers a usage
 * error with {@link #USAGE}.
 */
final class ExitCode {
  /** The command did what it was asked; {@code runs watch}: the run completed. */
  static final int OK = 0;

  /**
   * The API refused the action (a 4xx other than 401, 403 and 404: a conflict, a bad field); {@code
   * runs watch}: the run failed or was stopped.
   */
  static final int REFUSED = 1;

  /** The command line itself was wrong (picocli's usage error). */
  static final int USAGE = 2;

  /** No such run or target (404). */
  static final int NOT_FOUND = 3;

  /** No valid token (401), or the token may not do this (403). */
  static final int AUTH = 4;

  /** The server failed (5xx) or could not be reached. */
  static final int SERVER = 5;

  private ExitCode() {}

  /** The exit code for an API answer with this HTTP status (400 and above). */
  static int forStatus(int status) {
    if (status == 404) {
      return NOT_FOUND;
    }
    if (status == 401 || status == 403) {
      return AUTH;
    }
    if (status >= 400 && status < 500) {
      return REFUSED;
    }
    return SERVER;
  }
}

package dev.dripline.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

/**
 * One {@code dripline} command line run in this JVM: its exit code, stdout and stderr.
 *
 * @param exitCode what the process would exit with
 * @param out what it printed on stdout
 * @param err what it printed on stderr
 */
record CliRun(int exitCode, String out, String err) {
  static CliRun of(Map<String, String> env, boolean terminal, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        DriplineCli.run(
            args, env, new PrintWriter(out, true), new PrintWriter(err, true), terminal);
    return new CliRun(code, out.toString(), err.toString());
  }
}

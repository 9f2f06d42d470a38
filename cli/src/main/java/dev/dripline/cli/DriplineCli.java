package dev.dripline.cli;

import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code dripline}, the command-line client of Dripline's HTTP API (spec O5, docs/cli.md): runs,
 * targets, pools and the throttle. Tables for people by default, the API's JSON unchanged with
 * {@code --json}; the exit code says how it went ({@link ExitCode}). The options given here apply
 * to every command and may also follow the command's own.
 */
// INHERIT: every subcommand has --help, --version and the footer too.
@Command(
    name = "dripline",
    scope = CommandLine.ScopeType.INHERIT,
    mixinStandardHelpOptions = true,
    versionProvider = DriplineCli.Version.class,
    description = "Runs, targets, pools and the throttle of a Dripline API.",
    subcommands = {
      RunsCommand.class,
      TargetsCommand.class,
      PoolsCommand.class,
      ThrottleCommand.class,
      CommandLine.HelpCommand.class
    },
    footer = {
      "",
      "Environment: DRIPLINE_URL (default " + DriplineCli.DEFAULT_URL + "), DRIPLINE_TOKEN.",
      "Exit codes: 0 ok, 1 refused (or the watched run failed or stopped), 2 usage,",
      "3 not found, 4 token missing or not allowed, 5 server error or unreachable."
    })
public final class DriplineCli {
  static final String DEFAULT_URL = "http://127.0.0.1:8080";

  @Option(
      names = "--url",
      paramLabel = "<url>",
      description = "The API's base URL (default: $DRIPLINE_URL, else " + DEFAULT_URL + ").")
  String url;

  @Option(
      names = "--token",
      paramLabel = "<token>",
      description = "The bearer token (default: $DRIPLINE_TOKEN).")
  String token;

  @Option(names = "--json", description = "Print the API's JSON unchanged instead of tables.")
  boolean json;

  private final Map<String, String> env;
  private final PrintWriter out;
  private final PrintWriter err;
  private final boolean terminal;

  /**
   * @param env the environment to read {@code DRIPLINE_URL} and {@code DRIPLINE_TOKEN} from
   * @param terminal whether stdout is a terminal ({@code runs watch} redraws its line in place)
   */
  DriplineCli(Map<String, String> env, PrintWriter out, PrintWriter err, boolean terminal) {
    this.env = Map.copyOf(env);
    this.out = out;
    this.err = err;
    this.terminal = terminal;
  }

  /**
   * Runs {@code dripline} with the process's environment and streams and exits with the exit code.
   * Whether stdout is a terminal comes from the system property {@code dripline.terminal} ({@code
   * true} or {@code false}, which {@code bin/dripline} sets from {@code [[ -t 1 ]]}), else from
   * {@link System#console()}.
   */
  public static void main(String[] args) {
    Charset charset = Charset.defaultCharset();
    PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, charset), true);
    PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, charset), true);
    int code = run(args, System.getenv(), out, err, stdoutIsTerminal());
    out.flush();
    err.flush();
    System.exit(code);
  }

  /** Runs one command line and returns its exit code ({@link ExitCode}). */
  public static int run(
      String[] args, Map<String, String> env, PrintWriter out, PrintWriter err, boolean terminal) {
    DriplineCli cli = new DriplineCli(env, out, err, terminal);
    CommandLine commandLine = new CommandLine(cli);
    commandLine.setOut(out);
    commandLine.setErr(err);
    commandLine.setExecutionExceptionHandler(
        (exception, failed, parseResult) -> {
          if (exception instanceof ApiFailure failure) {
            List<String> lines = failure.lines();
            for (int i = 0; i < lines.size(); i++) {
              err.println(i == 0 ? "dripline: " + lines.get(i) : lines.get(i));
            }
            err.flush();
            return failure.exitCode();
          }
          throw exception;
        });
    int code = commandLine.execute(args);
    out.flush();
    err.flush();
    return code;
  }

  /** The API's base URL: {@code --url}, else {@code DRIPLINE_URL}, else the local stack's. */
  String url(String given) {
    String chosen = firstNonBlank(given, url, env.get("DRIPLINE_URL"));
    return chosen == null ? DEFAULT_URL : chosen;
  }

  /** The bearer token: {@code --token}, else {@code DRIPLINE_TOKEN}, else none. */
  String token(String given) {
    return firstNonBlank(given, token, env.get("DRIPLINE_TOKEN"));
  }

  boolean json() {
    return json;
  }

  PrintWriter out() {
    return out;
  }

  PrintWriter err() {
    return err;
  }

  boolean terminal() {
    return terminal;
  }

  // On Java 17 (the project's target) System.console() is null unless stdin and stdout are both
  // terminals, which is what this asks; JDK 22 changed that, and bin/dripline says it explicitly.
  @SuppressWarnings("SystemConsoleNull")
  private static boolean stdoutIsTerminal() {
    String given = System.getProperty("dripline.terminal");
    if (given != null) {
      return Boolean.parseBoolean(given);
    }
    return System.console() != null;
  }

  private static String firstNonBlank(String... values) {
    for (String value : values) {
      if (value != null && !value.isBlank()) {
        return value;
      }
    }
    return null;
  }

  /** The version of the jar, from its manifest; "development" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = DriplineCli.class.getPackage().getImplementationVersion();
      return new String[] {"dripline " + (version == null ? "development" : version)};
    }
  }
}

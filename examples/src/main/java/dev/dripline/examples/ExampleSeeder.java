package dev.dripline.examples;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Fills the example tables so the examples have work: {@code --users N} ensures {@code
 * example_users} holds at least N rows (new ones with messy emails for {@code
 * example.normalize-emails}); {@code --events N --tenants a,b,c} ensures each tenant has event ids
 * {@code 1..N} in {@code example_events} (for {@code example.copy-events}).
 *
 * <p>Runs without a Micronaut context, over plain JDBC ({@code DRIPLINE_DB_URL}, {@code
 * DRIPLINE_DB_USER}, {@code DRIPLINE_DB_PASSWORD}). It only ever adds what is missing, with
 * set-based SQL, so it is fast and running it twice is harmless. It does not create tables:
 * Dripline's app or worker migrates the schema at start-up.
 */
public final class ExampleSeeder {
  private static final String USAGE =
      "usage: ExampleSeeder [--users N] [--events N --tenants a,b,c] [--accounts N]"
          + " [--order-lines ORDERS] [--page-views N]";

  private final Connection connection;

  /** A seeder over {@code connection}, which it uses but does not close. */
  public ExampleSeeder(Connection connection) {
    this.connection = connection;
  }

  /**
   * What to seed.
   *
   * @param users least number of rows {@code example_users} must hold, or {@code null}
   * @param events number of events each tenant must have, or {@code null}
   * @param tenants the tenants for {@code events}
   * @param accounts least number of rows {@code example_accounts} must hold, or {@code null}
   * @param orders orders {@code 1..orders} whose lines {@code example_order_lines} must hold, or
   *     {@code null}
   * @param pageViews least number of rows {@code example_page_views} must hold, or {@code null}
   */
  public record Request(
      Long users, Long events, List<String> tenants, Long accounts, Long orders, Long pageViews) {

    /** Users and events only. */
    public Request(Long users, Long events, List<String> tenants) {
      this(users, events, tenants, null, null, null);
    }

    /** Parses the command line; throws {@link IllegalArgumentException} with a usage message. */
    public static Request parse(String... args) {
      Long users = null;
      Long events = null;
      Long accounts = null;
      Long orders = null;
      Long pageViews = null;
      List<String> tenants = List.of();
      for (int i = 0; i < args.length; i++) {
        String flag = args[i];
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("missing value after " + flag + "\n" + USAGE);
        }
        String value = args[++i];
        switch (flag) {
          case "--users" -> users = count(flag, value);
          case "--events" -> events = count(flag, value);
          case "--accounts" -> accounts = count(flag, value);
          case "--order-lines" -> orders = count(flag, value);
          case "--page-views" -> pageViews = count(flag, value);
          case "--tenants" ->
              tenants =
                  Arrays.stream(value.split(","))
                      .map(String::trim)
                      .filter(t -> !t.isEmpty())
                      .toList();
          default -> throw new IllegalArgumentException("unknown argument " + flag + "\n" + USAGE);
        }
      }
      if (events != null && tenants.isEmpty()) {
        throw new IllegalArgumentException("--events needs --tenants\n" + USAGE);
      }
      if (users == null
          && events == null
          && accounts == null
          && orders == null
          && pageViews == null) {
        throw new IllegalArgumentException("nothing to seed\n" + USAGE);
      }
      return new Request(users, events, tenants, accounts, orders, pageViews);
    }

    private static long count(String flag, String value) {
      try {
        long n = Long.parseLong(value);
        if (n >= 0) {
          return n;
        }
      } catch (NumberFormatException e) {
        // fall through to the usage error
      }
      throw new IllegalArgumentException(
          flag + " needs a non-negative integer, got " + value + "\n" + USAGE);
    }
  }

  /** Seeds the database named by the environment; exit code 2 on bad arguments, 1 on failure. */
  public static void main(String[] args) {
    Request request;
    try {
      request = Request.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    String url =
        env("DRIPLINE_DB_URL", "jdbc:postgresql://127.0.0.1:5432/dripline?sslmode=disable");
    try (Connection connection =
        DriverManager.getConnection(
            url, env("DRIPLINE_DB_USER", "dripline"), env("DRIPLINE_DB_PASSWORD", "dripline"))) {
      new ExampleSeeder(connection).seed(request).forEach(System.out::println);
    } catch (SQLException | IllegalStateException e) {
      System.err.println("seeding " + url + " failed: " + e.getMessage());
      System.exit(1);
    }
  }

  /**
   * Seeds what {@code request} asks for, each part in its own transaction.
   *
   * @return one line per part saying what was done
   * @throws IllegalStateException when the example tables do not exist yet
   */
  public List<String> seed(Request request) throws SQLException {
    requireSchema();
    List<String> done = new ArrayList<>();
    if (request.users() != null) {
      long inserted = ensureUsers(request.users());
      done.add("example_users: inserted " + inserted + " rows (at least " + request.users() + ")");
    }
    if (request.events() != null) {
      long inserted = ensureEvents(request.events(), request.tenants());
      done.add(
          "example_events: inserted "
              + inserted
              + " rows (event ids 1.."
              + request.events()
              + " for tenants "
              + String.join(",", request.tenants())
              + ")");
    }
    if (request.accounts() != null) {
      long inserted = ensureAccounts(request.accounts());
      done.add(
          "example_accounts: inserted " + inserted + " rows (at least " + request.accounts() + ")");
    }
    if (request.orders() != null) {
      long inserted = ensureOrderLines(request.orders());
      done.add(
          "example_order_lines: inserted "
              + inserted
              + " rows (orders 1.."
              + request.orders()
              + ", 1 to 5 lines each)");
    }
    if (request.pageViews() != null) {
      long inserted = ensurePageViews(request.pageViews());
      done.add(
          "example_page_views: inserted "
              + inserted
              + " rows (at least "
              + request.pageViews()
              + ", from 2026-11-01, one every 37 minutes)");
    }
    return done;
  }

  /**
   * Ensures {@code example_accounts} holds at least {@code atLeast} rows: account {@code g} has the
   * uuid {@code md5('account-' || g)}, so ids are spread over the key space as random ones are;
   * nine in ten new handles are messy (padded, mixed case) for {@code example.normalize-handles}.
   *
   * @return rows inserted
   */
  public long ensureAccounts(long atLeast) throws SQLException {
    return topUp(
        "example_accounts",
        atLeast,
        "insert into example_accounts (id, handle)"
            + " select cast(md5('account-' || g) as uuid), case when g % 10 = 0"
            + " then 'handle' || g else '  Handle' || g || ' ' end"
            + " from generate_series(?::bigint, ?::bigint) g on conflict (id) do nothing");
  }

  /**
   * Ensures orders {@code 1..orders} have their lines in {@code example_order_lines}: order {@code
   * o} has {@code 1 + o % 5} lines, numbered from 1, with messy SKUs for {@code
   * example.order-lines}.
   *
   * @return rows inserted
   */
  public long ensureOrderLines(long orders) throws SQLException {
    return inTransaction(
        () -> {
          try (PreparedStatement statement =
              connection.prepareStatement(
                  "insert into example_order_lines (order_id, line_no, sku)"
                      + " select o, l, ' sku-' || o || '-' || l || ' '"
                      + " from generate_series(1, ?::bigint) o"
                      + " cross join lateral generate_series(1, 1 + cast(o % 5 as int)) l"
                      + " on conflict (order_id, line_no) do nothing")) {
            statement.setLong(1, orders);
            return (long) statement.executeUpdate();
          }
        });
  }

  /**
   * Ensures {@code example_page_views} holds at least {@code atLeast} rows: view {@code g} at
   * 2026-11-01T00:00Z plus {@code g} times 37 minutes, for {@code example.daily-views}.
   *
   * @return rows inserted
   */
  public long ensurePageViews(long atLeast) throws SQLException {
    return topUp(
        "example_page_views",
        atLeast,
        "insert into example_page_views (viewed_at, path)"
            + " select timestamptz '2026-11-01 00:00:00+00' + g * interval '37 minutes',"
            + " '/page/' || (g % 17) from generate_series(?::bigint, ?::bigint) g");
  }

  /** Inserts rows {@code count + 1 .. atLeast} of {@code table} with {@code insert}, if short. */
  private long topUp(String table, long atLeast, String insert) throws SQLException {
    return inTransaction(
        () -> {
          lock();
          long existing;
          try (Statement statement = connection.createStatement();
              ResultSet rows = statement.executeQuery("select count(*) from " + table)) {
            rows.next();
            existing = rows.getLong(1);
          }
          if (existing >= atLeast) {
            return 0L;
          }
          try (PreparedStatement statement = connection.prepareStatement(insert)) {
            statement.setLong(1, existing + 1);
            statement.setLong(2, atLeast);
            return (long) statement.executeUpdate();
          }
        });
  }

  /**
   * Ensures {@code example_users} holds at least {@code atLeast} rows; nine in ten new emails are
   * messy (padded, mixed case) so {@code example.normalize-emails} has work and a scope.
   *
   * @return rows inserted
   */
  public long ensureUsers(long atLeast) throws SQLException {
    return inTransaction(
        () -> {
          lock();
          long existing;
          try (Statement statement = connection.createStatement();
              ResultSet rows = statement.executeQuery("select count(*) from example_users")) {
            rows.next();
            existing = rows.getLong(1);
          }
          if (existing >= atLeast) {
            return 0L;
          }
          try (PreparedStatement statement =
              connection.prepareStatement(
                  "insert into example_users (email)"
                      + " select case when g % 10 = 0 then 'user' || g || '@example.com'"
                      + " else '  User' || g || '@Example.COM ' end"
                      + " from generate_series(?::bigint, ?::bigint) g")) {
            statement.setLong(1, existing + 1);
            statement.setLong(2, atLeast);
            return (long) statement.executeUpdate();
          }
        });
  }

  /**
   * Ensures every tenant has events {@code 1..count} in {@code example_events}.
   *
   * @return rows inserted
   */
  public long ensureEvents(long count, List<String> tenants) throws SQLException {
    return inTransaction(
        () -> {
          try (PreparedStatement statement =
              connection.prepareStatement(
                  "insert into example_events (tenant, event_id, body)"
                      + " select t, g, '{\"tenant\":\"' || t || '\",\"n\":' || g || '}'"
                      + " from unnest(?::text[]) t cross join generate_series(1, ?::bigint) g"
                      + " on conflict (tenant, event_id) do nothing")) {
            statement.setArray(1, connection.createArrayOf("text", tenants.toArray()));
            statement.setLong(2, count);
            return (long) statement.executeUpdate();
          }
        });
  }

  private void requireSchema() throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet rows =
            statement.executeQuery(
                "select to_regclass('example_users') is not null"
                    + " and to_regclass('example_events') is not null"
                    + " and to_regclass('example_order_lines') is not null")) {
      rows.next();
      if (!rows.getBoolean(1)) {
        throw new IllegalStateException(
            "the example tables do not exist in this database; start Dripline (app or worker)"
                + " once so it runs its migrations, then seed again");
      }
    }
  }

  /** Serialises concurrent seeders so two of them cannot both top up the same shortfall. */
  private void lock() throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute("select pg_advisory_xact_lock(hashtext('dripline.example-seeder'))");
    }
  }

  @FunctionalInterface
  private interface Work {
    long run() throws SQLException;
  }

  private long inTransaction(Work work) throws SQLException {
    boolean autoCommit = connection.getAutoCommit();
    connection.setAutoCommit(false);
    try {
      long result = work.run();
      connection.commit();
      return result;
    } catch (SQLException | RuntimeException e) {
      connection.rollback();
      throw e;
    } finally {
      connection.setAutoCommit(autoCommit);
    }
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isBlank() ? fallback : value;
  }
}

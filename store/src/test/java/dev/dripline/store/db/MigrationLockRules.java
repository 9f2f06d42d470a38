package dev.dripline.store.db;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a migration may do to tables the running release reads and writes (CONTRIBUTING.md,
 * "Migrations"): take no lock that blocks the engine's batches for longer than a catalogue update.
 * Indexes are built {@code CONCURRENTLY} (on a table the same migration creates, no traffic can
 * wait, so a plain build is allowed there), each after a {@code drop index concurrently if exists}
 * of its name so that a retried build replaces what a failed one left; a concurrent build is a
 * migration of its own (Flyway runs it outside a transaction). {@code alter table} is limited to
 * changes PostgreSQL makes in the catalogue alone; a rewrite, a scan under an exclusive lock, a
 * rename the running release would not find and a data change over {@code batches} are refused.
 */
final class MigrationLockRules {
  private static final Pattern DOLLAR_TAG = Pattern.compile("\\$\\w*\\$");
  private static final Pattern CREATE_TABLE =
      Pattern.compile("^create (?:unlogged )?table (?:if not exists )?([\\w.\"]+)");
  private static final Pattern CREATE_INDEX =
      Pattern.compile(
          "^create (?:unique )?index (concurrently )?(?:if not exists )?([\\w\"]+)?\\s*on"
              + " (?:only )?([\\w.\"]+)");
  private static final Pattern DROP_INDEX_CONCURRENTLY =
      Pattern.compile("^drop index concurrently if exists ([\\w\"]+)");
  private static final Pattern ALTER_TABLE =
      Pattern.compile("^alter table (?:if exists )?(?:only )?([\\w.\"]+) (.*)$");
  private static final List<Pattern> BRIEF_ALTERATIONS =
      List.of(
          // A column with no default, or a constant one: the catalogue alone (PostgreSQL 11+).
          Pattern.compile(
              "^add (?:column )?(?:if not exists )?"
                  + "(?!(?:constraint|primary|unique|foreign|check|exclude)\\b)[\\w\"]+ "
                  + "(?:(?!\\b(?:default|references|primary|unique|generated|check|not|null"
                  + "|constraint|collate)\\b)[\\w\\[\\](),.\" ])+"
                  + "(?: (?:not null|null|collate \"?\\w+\"?|default (?:'[^']*'(?:::[\\w ]+)?"
                  + "|-?[\\d.]+|true|false|null|now\\(\\)|current_timestamp)))*$"),
          Pattern.compile("^drop (?:column )?(?:if exists )?[\\w\"]+$"),
          Pattern.compile(
              "^alter (?:column )?[\\w\"]+ (?:set default .+|drop default|drop not null)$"),
          Pattern.compile("^alter (?:column )?[\\w\"]+ set statistics \\d+$"),
          Pattern.compile("^(?:set|reset) \\(.*\\)$"),
          // Checked later by `validate constraint`, which lets reads and writes through.
          Pattern.compile("^add constraint [\\w\"]+ (?:check|foreign key) .* not valid$"),
          Pattern.compile("^add constraint [\\w\"]+ (?:unique|primary key) using index [\\w\"]+$"),
          Pattern.compile("^validate constraint [\\w\"]+$"),
          Pattern.compile("^drop constraint (?:if exists )?[\\w\"]+$"));
  private static final List<Pattern> REFUSED =
      List.of(
          Pattern.compile("^lock "),
          Pattern.compile("^vacuum full"),
          Pattern.compile("^cluster"),
          Pattern.compile("^reindex (?!\\(?concurrently)"),
          Pattern.compile("^refresh materialized view (?!concurrently)"),
          Pattern.compile("^(?:update|delete from) (?:only )?batches\\b"));

  private MigrationLockRules() {}

  /** What {@code sql} (one migration's script) does against the rules; empty when nothing. */
  static List<String> violations(String sql) {
    List<String> found = new ArrayList<>();
    List<String> statements = statements(sql);
    Set<String> createdTables = new HashSet<>();
    Set<String> droppedFirst = new HashSet<>();
    boolean concurrent = false;
    boolean transactional = false;
    for (String statement : statements) {
      Matcher table = CREATE_TABLE.matcher(statement);
      if (table.find()) {
        createdTables.add(bare(table.group(1)));
      }
      Matcher drop = DROP_INDEX_CONCURRENTLY.matcher(statement);
      Matcher index = CREATE_INDEX.matcher(statement);
      Matcher alter = ALTER_TABLE.matcher(statement);
      if (drop.find()) {
        droppedFirst.add(bare(drop.group(1)));
        concurrent = true;
      } else if (index.find()) {
        String name = index.group(2) == null ? null : bare(index.group(2));
        if (index.group(1) != null) {
          concurrent = true;
          if (name == null || !droppedFirst.contains(name)) {
            found.add(
                "index built concurrently without `drop index concurrently if exists` of its"
                    + " name before it (a retried build must replace an INVALID one): "
                    + statement);
          }
        } else {
          transactional = true;
          if (!createdTables.contains(bare(index.group(3)))) {
            found.add("index not built CONCURRENTLY on an existing table: " + statement);
          }
        }
      } else if (alter.find()) {
        transactional = true;
        if (!createdTables.contains(bare(alter.group(1)))) {
          for (String action : actions(alter.group(2))) {
            if (BRIEF_ALTERATIONS.stream().noneMatch(p -> p.matcher(action).find())) {
              found.add("alter table that may lock the table beyond an instant: " + statement);
              break;
            }
          }
        }
      } else {
        transactional = true;
        for (Pattern refused : REFUSED) {
          if (refused.matcher(statement).find()) {
            found.add("statement that blocks the engine's batches: " + statement);
          }
        }
      }
    }
    if (concurrent && transactional) {
      found.add(
          "a concurrent index build shares its migration with other statements: give it a"
              + " migration of its own");
    }
    return found;
  }

  /** The script's statements, lower-cased, comments removed, whitespace collapsed. */
  static List<String> statements(String sql) {
    List<String> statements = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    int i = 0;
    String dollar = null;
    while (i < sql.length()) {
      char c = sql.charAt(i);
      if (dollar != null) {
        if (sql.startsWith(dollar, i)) {
          current.append(dollar);
          i += dollar.length();
          dollar = null;
        } else {
          current.append(c);
          i++;
        }
      } else if (c == '-' && sql.startsWith("--", i)) {
        int end = sql.indexOf('\n', i);
        i = end < 0 ? sql.length() : end;
      } else if (c == '/' && sql.startsWith("/*", i)) {
        int end = sql.indexOf("*/", i + 2);
        i = end < 0 ? sql.length() : end + 2;
        current.append(' ');
      } else if (c == '\'') {
        int end = i + 1;
        while (end < sql.length()) {
          if (sql.charAt(end) == '\'' && !sql.startsWith("''", end)) {
            break;
          }
          end += sql.startsWith("''", end) ? 2 : 1;
        }
        current.append(sql, i, Math.min(end + 1, sql.length()));
        i = end + 1;
      } else if (c == '$') {
        Matcher tag = DOLLAR_TAG.matcher(sql).region(i, sql.length());
        if (tag.lookingAt()) {
          dollar = tag.group();
          current.append(dollar);
          i += dollar.length();
        } else {
          current.append(c);
          i++;
        }
      } else if (c == ';') {
        add(statements, current);
        i++;
      } else {
        current.append(c);
        i++;
      }
    }
    add(statements, current);
    return statements;
  }

  private static void add(List<String> statements, StringBuilder statement) {
    String normal = statement.toString().replaceAll("\\s+", " ").trim().toLowerCase(Locale.ROOT);
    if (!normal.isEmpty()) {
      statements.add(normal);
    }
    statement.setLength(0);
  }

  /** The comma-separated actions of an {@code alter table}, commas in parentheses kept. */
  private static List<String> actions(String actions) {
    List<String> list = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < actions.length(); i++) {
      char c = actions.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      } else if (c == ',' && depth == 0) {
        list.add(actions.substring(start, i).trim());
        start = i + 1;
      }
    }
    list.add(actions.substring(start).trim());
    return list;
  }

  private static String bare(String name) {
    String last = name.substring(name.lastIndexOf('.') + 1);
    return last.replace("\"", "");
  }
}

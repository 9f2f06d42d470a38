package dev.dripline.activities.testing;

import dev.dripline.store.db.Database;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Inserts and inspects targets, their live batches and runs for tests, under unique names; deletes
 * everything it created (other modules' tests share the database).
 */
@Singleton
public class TargetFixtures {
  private final RunFixtures sql;
  private final List<String> created = new CopyOnWriteArrayList<>();

  public TargetFixtures(Database database) {
    this.sql = new RunFixtures(database);
  }

  /** A unique target name with a readable prefix. */
  public static String uniqueName(String prefix) {
    return "it-" + prefix + "-" + UUID.randomUUID();
  }

  /** Inserts a target of {@code backfill} in {@code state}; returns its name. */
  public String target(
      String prefix, String backfill, String optionsJson, String group, String state) {
    String name = uniqueName(prefix);
    created.add(name);
    sql.update(
        "insert into targets (name, backfill, options, group_name, state)"
            + " values (?, ?, ?::jsonb, ?, ?)",
        name,
        backfill,
        optionsJson,
        group,
        state);
    return name;
  }

  /** Queues a live batch; returns its id. */
  public long liveBatch(String target, String payloadJson) {
    return (Long)
        sql.row(
                "insert into live_batches (target_name, payload) values (?, ?::jsonb) returning id",
                target,
                payloadJson)
            .get("id");
  }

  /** A run row for {@code target} in {@code status}; returns its id. */
  public long run(String target, String backfill, String status) {
    return (Long)
        sql.row(
                "insert into runs (backfill, options, options_key, batch_size,"
                    + " max_parallel_batches, status, target_name)"
                    + " values (?, '{}'::jsonb, ?, 10, 5, ?, ?) returning id",
                backfill,
                UUID.randomUUID().toString(),
                status,
                target)
            .get("id");
  }

  public void update(String statement, Object... parameters) {
    sql.update(statement, parameters);
  }

  public Map<String, Object> row(String query, Object... parameters) {
    return sql.row(query, parameters);
  }

  public List<Map<String, Object>> rows(String query, Object... parameters) {
    return sql.rows(query, parameters);
  }

  public Map<String, Object> targetRow(String name) {
    return sql.row("select * from targets where name = ?", name);
  }

  /** Deletes the targets (their live batches cascade) and every run of them. */
  public void deleteCreated() {
    for (String name : created) {
      sql.update("delete from runs where target_name = ?", name);
      sql.update("delete from targets where name = ?", name);
    }
    created.clear();
  }
}

package dev.dripline.activities.testing;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillOptions;
import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.KeyType;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.spi.TableBackfillDefinition;
import dev.dripline.spi.TableBatch;
import dev.dripline.spi.TableScope;
import dev.dripline.store.db.Database;
import jakarta.inject.Singleton;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * {@code test.tuple-rows}: a table definition over {@code test_tuple_rows}, keyed by {@code (grp
 * text, n integer)} — {@code grp} in ICU's English collation where PostgreSQL has it; option {@code
 * set} picks the rows (the scope), and a batch counts a visit on each of its rows, so a test can
 * check that every row was visited exactly once.
 */
@Singleton
public class TupleRowsBackfill implements TableBackfillDefinition {
  public static final String NAME = "test.tuple-rows";
  public static final KeySchema KEY =
      KeySchema.of(KeyColumn.of("grp", KeyType.TEXT), KeyColumn.of("n", KeyType.INTEGER));

  private final Database database;

  public TupleRowsBackfill(Database database) {
    this.database = database;
  }

  /** Creates the table if needed and replaces set {@code set}'s rows with {@code (grp, n)}s. */
  public void rows(String set, List<Object[]> rows) {
    database.runInTransaction(
        connection -> {
          try (Statement statement = connection.createStatement()) {
            String collation = "";
            try (ResultSet icu =
                statement.executeQuery("select 1 from pg_collation where collname = 'en-x-icu'")) {
              if (icu.next()) {
                collation = " collate \"en-x-icu\"";
              }
            }
            statement.execute(
                "create table if not exists test_tuple_rows (set_name text not null,"
                    + " grp text"
                    + collation
                    + " not null, n integer not null, visits integer not null default 0,"
                    + " primary key (set_name, grp, n))");
          }
          try (PreparedStatement delete =
              connection.prepareStatement("delete from test_tuple_rows where set_name = ?")) {
            delete.setString(1, set);
            delete.executeUpdate();
          }
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "insert into test_tuple_rows (set_name, grp, n) values (?, ?, ?)")) {
            for (Object[] row : rows) {
              insert.setString(1, set);
              insert.setString(2, (String) row[0]);
              insert.setInt(3, (Integer) row[1]);
              insert.addBatch();
            }
            insert.executeBatch();
          }
        });
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Counts a visit on each row of test_tuple_rows in the set the run names.";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(OptionSpec.required("set", OptionType.STRING, "Rows to visit."));
  }

  @Override
  public int defaultBatchSize() {
    return 3;
  }

  @Override
  public String table() {
    return "test_tuple_rows";
  }

  @Override
  public KeySchema key() {
    return KEY;
  }

  @Override
  public TableScope scope(BackfillOptions options) {
    return TableScope.of("set_name = ?", options.requireString("set"));
  }

  @Override
  public void processBatch(BackfillContext context, TableBatch batch, Connection transaction)
      throws SQLException {
    try (PreparedStatement update =
        transaction.prepareStatement(
            "update test_tuple_rows set visits = visits + 1 where " + batch.where())) {
      batch.bind(update, 1);
      update.executeUpdate();
    }
  }
}

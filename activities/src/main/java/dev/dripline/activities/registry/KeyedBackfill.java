package dev.dripline.activities.registry;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.BackfillDefinition;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeyJdbc;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.KeyType;
import dev.dripline.spi.KeyedBackfillDefinition;
import dev.dripline.spi.LongKeyBackfillDefinition;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.spi.TableBackfillDefinition;
import dev.dripline.spi.TableBatch;
import dev.dripline.spi.TableScope;
import dev.dripline.spi.TimeWindow;
import dev.dripline.spi.TimeWindows;
import dev.dripline.spi.TransactionalBackfillDefinition;
import dev.dripline.spi.WindowedBackfillDefinition;
import dev.dripline.store.db.Database;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;
import java.util.RandomAccess;
import java.util.regex.Pattern;

/**
 * A registered definition as the engine drives it, whatever its kind: its key, the keys in scope
 * after a cursor, and a batch over a {@link KeySpan}. {@code long} definitions are adapted to it
 * (their key is one bigint), and table definitions get the key scan K3 describes.
 */
public sealed interface KeyedBackfill {

  /** The definition as its author wrote it. */
  BackfillDefinition definition();

  default String name() {
    return definition().name();
  }

  /** The key's columns and types. */
  KeySchema key();

  /**
   * Up to {@code limit} keys in scope after {@code afterKey} (from the start when null), ascending.
   */
  List<Key> keysAfter(BackfillContext context, Key afterKey, int limit) throws Exception;

  /**
   * Plans nothing, but fails as planning would: asks for the first key (or window) in scope.
   *
   * @throws Exception what the definition throws
   */
  default void checkPlannable(BackfillContext context) throws Exception {
    keysAfter(context, null, 1);
  }

  /**
   * Whether a batch may run inside Dripline's transaction ({@link #processBatch(BackfillContext,
   * KeySpan, Connection)}), committed with the batch's completion.
   */
  boolean transactional();

  /**
   * Whether the engine checks that listed keys ascend in {@link Key#compareTo}'s order: not for a
   * table's key scan, whose order is the table's (text in its column's collation) and which the row
   * comparison makes strictly ascending.
   */
  default boolean checksKeyOrder() {
    return true;
  }

  /**
   * Processes a batch on its own, committing what it writes itself; the engine calls it only when
   * not {@link #transactional()}.
   */
  void processBatch(BackfillContext context, KeySpan span) throws Exception;

  /** Processes a batch inside {@code transaction}; only if {@link #transactional()}. */
  void processBatch(BackfillContext context, KeySpan span, Connection transaction) throws Exception;

  /** The engine's view of {@code definition}; {@code database} lists a table definition's keys. */
  static KeyedBackfill of(BackfillDefinition definition, Database database) {
    if (definition instanceof LongKeyBackfillDefinition longs) {
      return new LongKeys(longs);
    }
    if (definition instanceof KeyedBackfillDefinition keyed) {
      return new TypedKeys(keyed);
    }
    if (definition instanceof TableBackfillDefinition table) {
      return new TableKeys(table, database);
    }
    if (definition instanceof WindowedBackfillDefinition windowed) {
      return new Windows(windowed);
    }
    throw new IllegalStateException(
        "backfill "
            + definition.name()
            + " ("
            + definition.getClass().getName()
            + ") implements none of LongKeyBackfillDefinition, KeyedBackfillDefinition,"
            + " TableBackfillDefinition and WindowedBackfillDefinition");
  }

  /**
   * A definition whose batches run in Dripline's transaction only (table and windowed ones): the
   * engine never runs one on its own.
   */
  sealed interface InTransaction extends KeyedBackfill permits TableKeys, Windows {
    @Override
    default boolean transactional() {
      return true;
    }

    @Override
    default void processBatch(BackfillContext context, KeySpan span) {
      throw new UnsupportedOperationException(name() + " runs in Dripline's transaction only");
    }
  }

  /** A {@link LongKeyBackfillDefinition}: one bigint key. */
  record LongKeys(LongKeyBackfillDefinition definition) implements KeyedBackfill {
    @Override
    public KeySchema key() {
      return KeySchema.LONG;
    }

    @Override
    public List<Key> keysAfter(BackfillContext context, Key afterKey, int limit) throws Exception {
      List<Long> keys =
          definition.keysAfter(context, afterKey == null ? null : afterKey.getLong(0), limit);
      return keys == null ? null : new AsKeys(keys);
    }

    /**
     * A definition's {@code long} keys seen as {@link Key}s, each made when it is read: planning
     * checks every key once and keeps only a batch's first and last, so a page of 100,000 keys
     * leaves no 100,000 keys behind for the collector to copy.
     */
    private static final class AsKeys extends AbstractList<Key> implements RandomAccess {
      private final List<Long> keys;

      AsKeys(List<Long> keys) {
        this.keys = keys;
      }

      @Override
      public Key get(int index) {
        Long key = keys.get(index);
        return key == null ? null : Key.ofLong(key);
      }

      @Override
      public int size() {
        return keys.size();
      }
    }

    @Override
    public boolean transactional() {
      return definition instanceof TransactionalBackfillDefinition;
    }

    @Override
    public void processBatch(BackfillContext context, KeySpan span) throws Exception {
      definition.processBatch(context, range(span));
    }

    @Override
    public void processBatch(BackfillContext context, KeySpan span, Connection transaction)
        throws Exception {
      ((TransactionalBackfillDefinition) definition)
          .processBatch(context, range(span), transaction);
    }

    private static KeyRange range(KeySpan span) {
      return new KeyRange(span.startKey().getLong(0), span.endKey().getLong(0));
    }
  }

  /** A {@link KeyedBackfillDefinition}: its own keys, its own batches. */
  record TypedKeys(KeyedBackfillDefinition definition) implements KeyedBackfill {
    @Override
    public KeySchema key() {
      return definition.key();
    }

    @Override
    public List<Key> keysAfter(BackfillContext context, Key afterKey, int limit) throws Exception {
      return definition.keysAfter(context, afterKey, limit);
    }

    @Override
    public boolean transactional() {
      return false;
    }

    @Override
    public void processBatch(BackfillContext context, KeySpan span) throws Exception {
      definition.processBatch(context, span);
    }

    @Override
    public void processBatch(BackfillContext context, KeySpan span, Connection transaction) {
      throw new UnsupportedOperationException(name() + " does not run in Dripline's transaction");
    }
  }

  /**
   * A {@link TableBackfillDefinition}: the engine lists the keys with a row comparison on the key
   * columns (K3), which an index on them serves; its batches run in Dripline's transaction.
   */
  record TableKeys(TableBackfillDefinition definition, Database database) implements InTransaction {
    private static final Pattern TABLE = Pattern.compile("([a-z_][a-z0-9_]*\\.)?[a-z_][a-z0-9_]*");

    public TableKeys {
      if (definition.table() == null || !TABLE.matcher(definition.table()).matches()) {
        throw new IllegalStateException(
            "backfill "
                + definition.name()
                + " declares table "
                + definition.table()
                + "; a table is a lower-case SQL identifier, optionally schema-qualified");
      }
    }

    @Override
    public KeySchema key() {
      return definition.key();
    }

    /**
     * {@code select a, b from t where (a, b) > (?, ?) and (scope) order by a, b limit ?}: the
     * statement K3 describes ({@code KeyScanIT} shows PostgreSQL's plan is an index scan).
     */
    public String scanSql(boolean fromStart, TableScope scope) {
      String columns = TableBatch.columns(key());
      StringBuilder sql = new StringBuilder("select ").append(columns);
      sql.append(" from ").append(definition.table()).append(" where ");
      if (!fromStart) {
        sql.append('(').append(columns).append(") > (");
        for (int i = 0; i < key().size(); i++) {
          sql.append(i == 0 ? "?" : ", ?");
        }
        sql.append(") and ");
      }
      sql.append('(').append(scope.predicate()).append(')');
      return sql.append(" order by ").append(columns).append(" limit ?").toString();
    }

    @Override
    public boolean checksKeyOrder() {
      return false;
    }

    @Override
    public List<Key> keysAfter(BackfillContext context, Key afterKey, int limit) throws Exception {
      definition.beforePlanning(context);
      TableScope scope = definition.scope(context.options());
      String sql = scanSql(afterKey == null, scope);
      KeySchema key = key();
      return database.withConnection(
          connection -> {
            try (PreparedStatement statement = connection.prepareStatement(sql)) {
              int index = 1;
              if (afterKey != null) {
                index = KeyJdbc.bind(statement, index, afterKey);
              }
              for (Object parameter : scope.parameters()) {
                KeyJdbc.bind(statement, index++, parameter);
              }
              statement.setInt(index, limit);
              List<Key> keys = new ArrayList<>(Math.min(limit, 10_000));
              try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                  keys.add(KeyJdbc.read(rows, 1, key));
                }
              }
              return keys;
            }
          });
    }

    @Override
    public void processBatch(BackfillContext context, KeySpan span, Connection transaction)
        throws Exception {
      definition.processBatch(
          context, new TableBatch(key(), span, definition.scope(context.options())), transaction);
    }
  }

  /**
   * A {@link WindowedBackfillDefinition} (K4): each batch is one window, planned by arithmetic, not
   * by listing keys; its batches run in Dripline's transaction.
   */
  record Windows(WindowedBackfillDefinition definition) implements InTransaction {
    public Windows {
      KeyType type = definition.key().type();
      if (type != KeyType.TIMESTAMPTZ && type != KeyType.DATE) {
        throw new IllegalStateException(
            "backfill "
                + definition.name()
                + " declares windows over "
                + type.wire()
                + "; windows are over timestamptz or date");
      }
    }

    @Override
    public KeySchema key() {
      return KeySchema.of(definition.key());
    }

    /**
     * Up to {@code limit} windows after the one that ends at {@code afterKey} (inclusive; from the
     * first window when null), as inclusive key spans.
     *
     * @throws PermanentBackfillException when the windows are of another type than the key
     */
    public List<KeySpan> windowsAfter(BackfillContext context, Key afterKey, int limit)
        throws Exception {
      TimeWindows windows = windows(context);
      List<KeySpan> spans = new ArrayList<>();
      long first = windows.indexAfter(afterKey == null ? null : afterKey.get(0));
      for (long i = first; i < windows.count() && spans.size() < limit; i++) {
        spans.add(span(windows.window(i)));
      }
      return spans;
    }

    /**
     * The definition's windows for a run.
     *
     * @throws PermanentBackfillException when they are of another type than the key
     */
    public TimeWindows windows(BackfillContext context) throws Exception {
      TimeWindows windows = definition.windows(context);
      if (windows.keyType() != definition.key().type()) {
        throw new PermanentBackfillException(
            "windows over "
                + windows.keyType().wire()
                + " for a key of type "
                + definition.key().type().wire());
      }
      return windows;
    }

    /** {@code window} as a batch shows it: an inclusive key span. */
    public static KeySpan span(TimeWindow window) {
      return new KeySpan(Key.of(window.start()), Key.of(lastOf(window.end())));
    }

    /** The last key value before {@code end}: a day, or a microsecond, earlier. */
    private static Object lastOf(Object end) {
      return end instanceof Instant instant
          ? instant.minus(1, ChronoUnit.MICROS)
          : ((LocalDate) end).minusDays(1);
    }

    /** The window that {@code span} (from {@link #windowsAfter}) shows. */
    static TimeWindow window(KeySpan span) {
      Object last = span.endKey().get(0);
      Object end =
          last instanceof Instant instant
              ? instant.plus(1, ChronoUnit.MICROS)
              : ((LocalDate) last).plusDays(1);
      return new TimeWindow(span.startKey().get(0), end);
    }

    @Override
    public List<Key> keysAfter(BackfillContext context, Key afterKey, int limit) {
      throw new UnsupportedOperationException("windows are planned by windowsAfter");
    }

    @Override
    public void checkPlannable(BackfillContext context) throws Exception {
      windowsAfter(context, null, 1);
    }

    @Override
    public void processBatch(BackfillContext context, KeySpan span, Connection transaction)
        throws Exception {
      definition.processBatch(context, window(span), transaction);
    }
  }
}

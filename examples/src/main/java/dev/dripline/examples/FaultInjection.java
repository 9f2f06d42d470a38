package dev.dripline.examples;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.store.db.Database;
import dev.dripline.spi.KeyJson;
import io.micronaut.json.JsonMapper;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;

/**
 * Fault injection shared by all examples, driven by table {@code example_faults(tag, phase, key)}:
 * while a row's {@code tag} equals the run's {@code faultTag} option (or, for live batches, the tag
 * the caller passes, e.g. the target's name), planning fails (phase {@code plan}), a batch whose
 * range holds {@code key} fails ({@code batch}), or live batches fail ({@code live}). Deleting the
 * row heals it.
 *
 * <p>Faults are {@link InjectedFaultException}s, i.e. retryable. Without a tag nothing is looked
 * up, so the examples pay nothing for this outside tests and demos.
 */
@Singleton
public class FaultInjection {
  /** Name of the option every example accepts to opt a run into fault injection. */
  public static final String FAULT_TAG_OPTION = "faultTag";

  /** The {@link #FAULT_TAG_OPTION} every example declares. */
  public static final OptionSpec FAULT_TAG_SPEC =
      OptionSpec.optional(
          FAULT_TAG_OPTION,
          OptionType.STRING,
          "Tag of example_faults rows that apply to this run.");

  private final Database database;
  private final JsonMapper json;

  public FaultInjection(Database database, JsonMapper json) {
    this.database = database;
    this.json = json;
  }

  /** The run's fault tag, or {@code null} when the run did not set one. */
  public static String tagOf(BackfillContext context) {
    return context.options().string(FAULT_TAG_OPTION).filter(tag -> !tag.isBlank()).orElse(null);
  }

  /** Fails when a {@code plan} fault is set for {@code tag}. */
  public void checkPlan(String tag) {
    if (tag != null
        && exists("select 1 from example_faults where tag = ? and phase = 'plan'", tag)) {
      throw new InjectedFaultException("injected plan fault (tag " + tag + ")");
    }
  }

  /** Fails when a {@code batch} fault for {@code tag} names a key within {@code range}. */
  public void checkBatch(String tag, KeyRange range) {
    if (tag != null
        && exists(
            "select 1 from example_faults where tag = ? and phase = 'batch' and key between ? and ?",
            tag,
            range.startKey(),
            range.endKey())) {
      throw new InjectedFaultException(
          "injected batch fault in ["
              + range.startKey()
              + ", "
              + range.endKey()
              + "] (tag "
              + tag
              + ")");
    }
  }

  /**
   * Fails when a {@code batch} fault for {@code tag} names, in {@code typed_key} (the key as the
   * API shows it, e.g. {@code [1042, 3]}), a key of {@code schema} within {@code span}. A row whose
   * key does not fit {@code schema} is ignored.
   */
  public void checkBatch(String tag, KeySchema schema, KeySpan span) {
    if (tag == null) {
      return;
    }
    List<String> keys =
        database.withConnection(
            connection -> {
              try (PreparedStatement statement =
                  connection.prepareStatement(
                      "select typed_key::text from example_faults"
                          + " where tag = ? and phase = 'batch' and typed_key is not null")) {
                statement.setString(1, tag);
                List<String> found = new ArrayList<>();
                try (ResultSet rows = statement.executeQuery()) {
                  while (rows.next()) {
                    found.add(rows.getString(1));
                  }
                }
                return found;
              }
            });
    for (String text : keys) {
      Key key;
      try {
        key = KeyJson.fromJson(json.readValue(text, Object.class), schema);
      } catch (IOException | IllegalArgumentException e) {
        continue;
      }
      if (span.contains(key)) {
        throw new InjectedFaultException("injected batch fault in " + span + " (tag " + tag + ")");
      }
    }
  }

  /** Fails when a {@code live} fault is set for {@code tag}. */
  public void checkLive(String tag) {
    if (tag != null
        && exists("select 1 from example_faults where tag = ? and phase = 'live'", tag)) {
      throw new InjectedFaultException("injected live fault (tag " + tag + ")");
    }
  }

  private boolean exists(String sql, Object... parameters) {
    return database.withConnection(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
              statement.setObject(i + 1, parameters[i]);
            }
            try (ResultSet rows = statement.executeQuery()) {
              return rows.next();
            }
          }
        });
  }
}

package dev.dripline.examples;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.KeyRange;
import dev.dripline.store.db.Database;
import jakarta.inject.Singleton;
import java.sql.PreparedStatement;
import java.sql.ResultSet;

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

  private final Database database;

  public FaultInjection(Database database) {
    this.database = database;
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

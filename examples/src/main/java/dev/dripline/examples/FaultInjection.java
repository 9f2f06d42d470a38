package dev.dripline.examples;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeyJson;
import dev.dripline.spi.KeyRange;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;

/**
 * Fault injection shared by all examples, driven by table {@code example_faults(tag, phase, key)}:
 * while a row's {@code tag} equals the run's {@code faultTag} option (or, for live batches, the tag
 * the caller passes, e.g. the target's name), planning fails (phase {@code plan}), a batch whose
 * range holds {@code key} fails ({@code batch}), or live batches fail ({@code live}). Deleting the
 * row heals it.
 *
 * <p>Faults are {@link InjectedFaultException}s, i.e. retryable. The table is read through the
 * run's {@link BackfillContext#dataSource()}. Without a tag nothing is looked up, so the examples
 * pay nothing for this outside tests and demos.
 */
public final class FaultInjection {
  /** Name of the option every example accepts to opt a run into fault injection. */
  public static final String FAULT_TAG_OPTION = "faultTag";

  /** The {@link #FAULT_TAG_OPTION} every example declares. */
  public static final OptionSpec FAULT_TAG_SPEC =
      OptionSpec.optional(
          FAULT_TAG_OPTION,
          OptionType.STRING,
          "Tag of example_faults rows that apply to this run.");

  private FaultInjection() {}

  /** The run's fault tag, or {@code null} when the run did not set one. */
  public static String tagOf(BackfillContext context) {
    return context.options().string(FAULT_TAG_OPTION).filter(tag -> !tag.isBlank()).orElse(null);
  }

  /** Fails when a {@code plan} fault is set for the run's tag. */
  public static void checkPlan(BackfillContext context) throws SQLException {
    String tag = tagOf(context);
    if (tag != null
        && Jdbc.exists(
            context.dataSource(),
            "select 1 from example_faults where tag = ? and phase = 'plan'",
            tag)) {
      throw new InjectedFaultException("injected plan fault (tag " + tag + ")");
    }
  }

  /** Fails when a {@code batch} fault for the run's tag names a key within {@code range}. */
  public static void checkBatch(BackfillContext context, KeyRange range) throws SQLException {
    String tag = tagOf(context);
    if (tag != null
        && Jdbc.exists(
            context.dataSource(),
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
   * Fails when a {@code batch} fault for the run's tag names, in {@code typed_key} (the key as the
   * API shows it, e.g. {@code [1042, 3]}), a key of {@code schema} within {@code span}. A row whose
   * key does not fit {@code schema} is ignored.
   */
  public static void checkBatch(BackfillContext context, KeySchema schema, KeySpan span)
      throws SQLException {
    String tag = tagOf(context);
    if (tag == null) {
      return;
    }
    List<String> keys =
        Jdbc.strings(
            context.dataSource(),
            "select typed_key::text from example_faults"
                + " where tag = ? and phase = 'batch' and typed_key is not null",
            tag);
    for (String text : keys) {
      Key key;
      try {
        key = KeyJson.fromJsonText(text, schema);
      } catch (IllegalArgumentException e) {
        continue;
      }
      if (span.contains(key)) {
        throw new InjectedFaultException("injected batch fault in " + span + " (tag " + tag + ")");
      }
    }
  }

  /** Fails when a {@code live} fault is set for {@code tag}, read through {@code dataSource}. */
  public static void checkLive(DataSource dataSource, String tag) throws SQLException {
    if (tag != null
        && Jdbc.exists(
            dataSource, "select 1 from example_faults where tag = ? and phase = 'live'", tag)) {
      throw new InjectedFaultException("injected live fault (tag " + tag + ")");
    }
  }
}

package dev.dripline.examples;

import dev.dripline.spi.BackfillContext;
import dev.dripline.spi.Key;
import dev.dripline.spi.KeyColumn;
import dev.dripline.spi.KeySchema;
import dev.dripline.spi.KeySpan;
import dev.dripline.spi.KeyType;
import dev.dripline.spi.OptionSpec;
import dev.dripline.spi.OptionType;
import dev.dripline.spi.PermanentBackfillException;
import dev.dripline.spi.TimeWindow;
import dev.dripline.spi.TimeWindows;
import dev.dripline.spi.WindowedBackfillDefinition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;

/**
 * {@code example.daily-views}: for each day from option {@code from} to option {@code to}
 * (inclusive dates, UTC), counts that day's rows of {@code example_page_views} into {@code
 * example_daily_views} — an upsert, so a day counted twice keeps the right count (K6 in
 * docs/spec.md). A windowed definition (K4): each batch is one window of option {@code window} (a
 * duration, whole days; one day by default), planned without scanning rows.
 */
public class DailyViewsBackfill implements WindowedBackfillDefinition {
  public static final String NAME = "example.daily-views";

  private static final KeyColumn DAY = KeyColumn.of("day", KeyType.DATE);
  private static final KeySchema KEY = KeySchema.of(DAY);
  private static final Duration ONE_DAY = Duration.ofDays(1);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Counts example_page_views per UTC day from `from` to `to` into example_daily_views.";
  }

  @Override
  public List<OptionSpec> options() {
    return List.of(
        OptionSpec.required("from", OptionType.DATE, "First day to count (UTC)."),
        OptionSpec.required("to", OptionType.DATE, "Last day to count (UTC), inclusive.")
            .notBefore("from"),
        OptionSpec.withDefault(
            "window", OptionType.DURATION, "P1D", "Days per batch, e.g. P1D or P7D (whole days)."),
        FaultInjection.FAULT_TAG_SPEC);
  }

  @Override
  public List<String> tables() {
    return List.of("example_daily_views");
  }

  @Override
  public KeyColumn key() {
    return DAY;
  }

  @Override
  public TimeWindows windows(BackfillContext context) throws SQLException {
    FaultInjection.checkPlan(context);
    LocalDate from = context.options().requireDate("from");
    LocalDate to = context.options().requireDate("to");
    Duration window = context.options().requireDuration("window");
    if (window.toSeconds() % ONE_DAY.toSeconds() != 0 || window.toNanosPart() != 0) {
      throw new PermanentBackfillException(
          "window (" + window + ") is not a whole number of days: the key is a date");
    }
    // A window longer than the whole range is one window: cap the days at what an int holds.
    int days = (int) Math.min(window.toDays(), Integer.MAX_VALUE);
    return TimeWindows.days(from, to.plusDays(1), days);
  }

  @Override
  public void processBatch(BackfillContext context, TimeWindow window, Connection transaction)
      throws SQLException {
    LocalDate first = window.startDate();
    LocalDate end = window.endDate();
    FaultInjection.checkBatch(context, KEY, new KeySpan(Key.of(first), Key.of(end.minusDays(1))));
    try (PreparedStatement upsert =
        transaction.prepareStatement(
            "insert into example_daily_views (day, views)"
                + " select ?, count(*) from example_page_views"
                + " where viewed_at >= ? and viewed_at < ?"
                + " on conflict (day) do update set views = excluded.views")) {
      for (LocalDate day = first; day.isBefore(end); day = day.plusDays(1)) {
        upsert.setObject(1, day);
        upsert.setObject(2, OffsetDateTime.of(day.atStartOfDay(), ZoneOffset.UTC));
        upsert.setObject(3, OffsetDateTime.of(day.plusDays(1).atStartOfDay(), ZoneOffset.UTC));
        upsert.addBatch();
      }
      upsert.executeBatch();
    }
  }
}

package dev.dripline.activities.throttle;

import dev.dripline.runtime.throttle.ThrottleCheck;
import dev.dripline.runtime.throttle.ThrottleChecks;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.throttle.CheckLimits;
import dev.dripline.store.throttle.CheckOverrideRepository;
import dev.dripline.store.throttle.CheckRow;
import dev.dripline.store.throttle.CheckRowRepository;
import dev.dripline.store.throttle.CheckRule;
import dev.dripline.store.throttle.CheckStatus;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Evaluates the health checks once per interval for every run and worker (P1): of the workers that
 * try at a given time, the one that takes the check's advisory lock reads it ({@link CheckReader}),
 * applies the state rule ({@link CheckRule}) to the previous row, with the check's limits as
 * configured or as changed at runtime ({@code throttle_check_overrides}, read at every evaluation),
 * and records the next in {@code throttle_checks} with the backfills it applies to ({@code
 * applies_to}, {@code NULL} for every backfill), in one transaction; the others skip, as does any
 * worker while the recorded evaluation is younger than the interval. Time is the caller's ({@code
 * now}), so tests drive evaluations without waiting.
 */
@Singleton
public class CheckEvaluator {
  /** Scheduling jitter tolerated before a recorded evaluation counts as due again. */
  private static final Duration MAX_EARLY = Duration.ofMillis(500);

  private final ThrottleChecks checks;
  private final CheckRowRepository rows;
  private final CheckOverrideRepository overrides;
  private final CheckReader reader;
  private final DataTransactions transactions;

  public CheckEvaluator(
      ThrottleChecks checks,
      CheckRowRepository rows,
      CheckOverrideRepository overrides,
      CheckReader reader,
      DataTransactions transactions) {
    this.checks = checks;
    this.rows = rows;
    this.overrides = overrides;
    this.reader = reader;
    this.transactions = transactions;
  }

  /** Evaluates every configured check that is due at {@code now}; returns the rows recorded. */
  public List<CheckRow> evaluateNow(Instant now) {
    List<CheckRow> recorded = new ArrayList<>();
    for (ThrottleCheck check : checks.all()) {
      evaluateIfDue(check, now).ifPresent(recorded::add);
    }
    return recorded;
  }

  /**
   * Evaluates {@code check} at {@code now} unless another worker is evaluating it or its last
   * evaluation is younger than its interval.
   *
   * @return the row recorded, or empty if skipped
   */
  public Optional<CheckRow> evaluateIfDue(ThrottleCheck check, Instant now) {
    return transactions.inTransaction(
        connection -> {
          if (!rows.tryLock(check.name())) {
            return Optional.empty();
          }
          Optional<CheckRow> previous = rows.findByName(check.name());
          if (previous.isPresent() && !due(previous.get().evaluatedAt(), check.interval(), now)) {
            return Optional.empty();
          }
          CheckLimits limits =
              check.limits().overriddenBy(overrides.findByName(check.name()).orElse(null));
          CheckReading reading = reader.read(check);
          CheckStatus status =
              CheckRule.next(
                  previous.map(CheckRow::status).orElse(null), reading.value(), limits, now);
          CheckRow row =
              new CheckRow(
                  check.name(),
                  check.kind().configName(),
                  reading.value(),
                  limits.threshold(),
                  limits.resumeBelow(),
                  status.state().stored(),
                  status.holding(),
                  status.since(),
                  now,
                  reading.error());
          rows.record(
              row.name(),
              row.kind(),
              row.value(),
              row.threshold(),
              row.resumeBelow(),
              row.state(),
              row.holding(),
              row.since(),
              row.evaluatedAt(),
              row.error(),
              check.appliesTo().toArray(String[]::new));
          return Optional.of(row);
        });
  }

  /**
   * Deletes the rows of checks that are not configured here: nothing evaluates them again, so a row
   * left holding would hold its runs for ever. Called by a worker at start-up; every evaluating
   * worker must therefore be given the same checks.
   *
   * @return the number of rows deleted
   */
  public int forgetUnconfigured() {
    return transactions.inTransaction(
        connection ->
            rows.deleteAllExcept(
                checks.all().stream().map(ThrottleCheck::name).toArray(String[]::new)));
  }

  private static boolean due(Instant evaluatedAt, Duration interval, Instant now) {
    Duration tenth = interval.dividedBy(10);
    Duration early = tenth.compareTo(MAX_EARLY) < 0 ? tenth : MAX_EARLY;
    return !evaluatedAt.isAfter(now.minus(interval).plus(early));
  }
}

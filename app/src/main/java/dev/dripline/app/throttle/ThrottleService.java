package dev.dripline.app.throttle;

import dev.dripline.app.problem.ValidationProblem;
import dev.dripline.app.request.BodyReader;
import dev.dripline.app.request.BoundBody;
import dev.dripline.runtime.throttle.ThrottleChecks;
import dev.dripline.store.catalogue.FieldError;
import dev.dripline.store.db.DataTransactions;
import dev.dripline.store.throttle.BrakeRepository;
import dev.dripline.store.throttle.CheckOverride;
import dev.dripline.store.throttle.CheckOverrideRepository;
import dev.dripline.store.throttle.CheckRowRepository;
import jakarta.inject.Singleton;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The API's view of what holds runs: the brake ({@code throttle_brake}), the rows the workers'
 * evaluator records ({@code throttle_checks}) and the limits changed at runtime ({@code
 * throttle_check_overrides}). Each check row carries the threshold and {@code resumeBelow} it was
 * judged by, so the app shows the checks without being given their configuration; an override wins
 * over them from the evaluator's next interval, and is shown in effect at once.
 */
@Singleton
public class ThrottleService {
  private final CheckRowRepository rows;
  private final CheckOverrideRepository overrides;
  private final BrakeRepository brake;
  private final ThrottleChecks configured;
  private final BodyReader bodies;
  private final DataTransactions transactions;

  public ThrottleService(
      CheckRowRepository rows,
      CheckOverrideRepository overrides,
      BrakeRepository brake,
      ThrottleChecks configured,
      BodyReader bodies,
      DataTransactions transactions) {
    this.rows = rows;
    this.overrides = overrides;
    this.brake = brake;
    this.configured = configured;
    this.bodies = bodies;
    this.transactions = transactions;
  }

  /** The brake, if on, and every check's last evaluation with its limits in effect. */
  public ThrottleResponse current() {
    Map<String, CheckOverride> changed =
        overrides.findAllOrdered().stream()
            .collect(Collectors.toMap(CheckOverride::name, Function.identity()));
    return new ThrottleResponse(
        brake.current().map(HoldResponse::of).orElse(null),
        rows.findAllOrdered().stream()
            .map(row -> CheckResponse.of(row, changed.get(row.name())))
            .toList());
  }

  /**
   * Puts the brake on for {@code who}. While it is on already, the existing hold stays unchanged
   * (its reason, who and since) and is answered: holding twice is not an error.
   *
   * @param body the request body, {@code {reason}}
   */
  public ThrottleResponse hold(String body, String who) {
    BoundBody<HoldRequest> request = bodies.read(body, HoldRequest.class);
    if (!request.errors().isEmpty()) {
      throw new ValidationProblem(request.errors());
    }
    brake.holdIfReleased(request.body().reason(), who);
    return current();
  }

  /** Takes the brake off; releasing a brake that is off is not an error. */
  public ThrottleResponse release() {
    brake.release();
    return current();
  }

  /**
   * Changes a check's limits at runtime for {@code who}, after checking them against the limits in
   * effect: the check must be configured (or evaluated), and the resulting {@code resumeBelow} must
   * not be above the resulting threshold. Nothing is written unless every field is valid.
   *
   * @param name the check's name, from the path
   * @param body the request body, {@code {threshold?, resumeBelow?}}
   */
  public ThrottleResponse change(String name, String body, String who) {
    BoundBody<CheckChangeRequest> request = bodies.read(body, CheckChangeRequest.class);
    return transactions.inTransaction(
        connection -> {
          List<FieldError> errors = new ArrayList<>(request.errors());
          Optional<Limits> limits = limits(name);
          if (limits.isEmpty()) {
            errors.add(0, new FieldError("name", "'" + name + "' is not a configured check"));
          }
          CheckChangeRequest change = request.body();
          if (errors.isEmpty() && change.threshold() == null && change.resumeBelow() == null) {
            errors.add(new FieldError("body", "must give threshold, resumeBelow or both"));
          }
          if (errors.isEmpty()) {
            double threshold =
                change.threshold() == null ? limits.get().threshold() : change.threshold();
            double resumeBelow =
                change.resumeBelow() == null ? limits.get().resumeBelow() : change.resumeBelow();
            if (resumeBelow > threshold) {
              errors.add(
                  new FieldError(
                      "resumeBelow",
                      resumeBelow + " must be no greater than the threshold " + threshold));
            }
          }
          if (!errors.isEmpty()) {
            throw new ValidationProblem(errors);
          }
          overrides.change(name, change.threshold(), change.resumeBelow(), who);
          return current();
        });
  }

  /**
   * The limits in effect for check {@code name}: its configuration (where the app is given it),
   * else its last evaluation's, with its override applied; empty if the check is neither configured
   * nor evaluated.
   */
  private Optional<Limits> limits(String name) {
    Optional<Limits> base =
        configured
            .named(name)
            .map(check -> new Limits(check.limits().threshold(), check.limits().resumeBelow()));
    if (base.isEmpty()) {
      base = rows.findByName(name).map(row -> new Limits(row.threshold(), row.resumeBelow()));
    }
    Optional<CheckOverride> override = overrides.findByName(name);
    return base.map(limits -> override.map(limits::overriddenBy).orElse(limits));
  }

  /** A check's threshold and {@code resumeBelow}. */
  private record Limits(double threshold, double resumeBelow) {
    Limits overriddenBy(CheckOverride override) {
      return new Limits(
          override.threshold() == null ? threshold : override.threshold(),
          override.resumeBelow() == null ? resumeBelow : override.resumeBelow());
    }
  }
}

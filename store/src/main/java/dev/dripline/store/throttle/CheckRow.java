package dev.dripline.store.throttle;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import java.time.Instant;

/**
 * A row of {@code throttle_checks}: a check's last evaluation, with the limits it was judged by.
 *
 * @param name the check's name
 * @param kind its kind, as configuration spells it
 * @param value the reading, or {@code null} if unknown
 * @param threshold the threshold it was compared with
 * @param resumeBelow the {@code resumeBelow} it was compared with
 * @param state {@code clear}, {@code over} or {@code unknown}
 * @param holding whether it holds the runs it applies to
 * @param since when it last started or stopped holding
 * @param evaluatedAt when it was evaluated
 * @param error why the reading is unknown, or {@code null}
 */
@MappedEntity("throttle_checks")
public record CheckRow(
    @Id String name,
    String kind,
    @Nullable Double value,
    double threshold,
    double resumeBelow,
    String state,
    boolean holding,
    Instant since,
    Instant evaluatedAt,
    @Nullable String error) {

  /** The status the state rule left. */
  public CheckStatus status() {
    return new CheckStatus(CheckState.ofStored(state), holding, since);
  }
}

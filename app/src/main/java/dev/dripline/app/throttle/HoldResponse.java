package dev.dripline.app.throttle;

import dev.dripline.store.throttle.BrakeRow;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;

/**
 * The brake in {@code GET /api/throttle}, while it is on.
 *
 * @param who the name of the principal who put it on
 * @param since when it was put on
 * @param reason why
 */
@Serdeable
public record HoldResponse(String who, Instant since, String reason) {

  static HoldResponse of(BrakeRow row) {
    return new HoldResponse(row.heldBy(), row.since(), row.reason());
  }
}

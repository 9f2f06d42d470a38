package dev.dripline.app.audit;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.dripline.store.audit.AuditEvent;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.time.Instant;

/**
 * An entry of the audit trail as {@code GET /api/audit} shows it (O4).
 *
 * @param id its place in the trail: a later action has a larger id
 * @param at when it was recorded
 * @param actor who: the caller's name ({@code operator}) or {@code temporal}
 * @param action what, e.g. {@code run.stop}
 * @param runId the run it names, else {@code null}
 * @param target the target it names, else {@code null}
 * @param subject what else it names (a pool, a throttle check, a webhook), else {@code null}
 * @param detail what was asked, e.g. a cap change's body, else {@code null}
 * @param outcome {@code accepted}, {@code rejected} or {@code ignored}
 * @param status the HTTP status answered; {@code null} for a signal
 * @param problem why it was rejected or ignored, else {@code null}
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record AuditResponse(
    long id,
    Instant at,
    String actor,
    String action,
    @Nullable Long runId,
    @Nullable String target,
    @Nullable String subject,
    @Nullable String detail,
    String outcome,
    @Nullable Integer status,
    @Nullable String problem) {

  static AuditResponse of(AuditEvent event) {
    return new AuditResponse(
        event.id(),
        event.at(),
        event.actor(),
        event.action(),
        event.runId(),
        event.target(),
        event.subject(),
        event.detail(),
        event.outcome(),
        event.status(),
        event.problem());
  }
}

package dev.dripline.store.audit;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.GeneratedValue;
import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;
import java.time.Instant;

/**
 * A row of {@code audit_events} (O4, migration V37): one operator action and its outcome.
 *
 * @param id its place in the trail: a later action has a larger id
 * @param at when it was recorded, just after the action was answered
 * @param actor who: the caller's name (the token's role, {@code operator}), or {@link #TEMPORAL}
 *     for a signal sent to a run's workflow from the Temporal CLI or Web UI
 * @param action what, e.g. {@code run.stop}
 * @param runId the run it names, if any
 * @param target the target it names, if any
 * @param subject what else it names (a pool, a throttle check, a webhook, an id naming nothing)
 * @param detail what was asked, e.g. a cap change's body; never a secret
 * @param outcome {@link #ACCEPTED}, {@link #REJECTED} or {@link #IGNORED}
 * @param status the HTTP status answered; none for a signal
 * @param problem why it was rejected or ignored
 * @param dedupKey set by a workflow's write, which a retried activity may repeat
 */
@MappedEntity("audit_events")
public record AuditEvent(
    @Id @GeneratedValue @Nullable Long id,
    @Nullable Instant at,
    String actor,
    String action,
    @Nullable Long runId,
    @Nullable String target,
    @Nullable String subject,
    @Nullable String detail,
    String outcome,
    @Nullable Integer status,
    @Nullable String problem,
    @Nullable String dedupKey) {

  /** The action was done. */
  public static final String ACCEPTED = "accepted";

  /** The action was refused: {@link #status} and {@link #problem} say how and why. */
  public static final String REJECTED = "rejected";

  /** A signal the run's workflow took and ignored by its rules: {@link #problem} says why. */
  public static final String IGNORED = "ignored";

  /** The actor of a signal sent to a run's workflow by anyone but Dripline itself. */
  public static final String TEMPORAL = "temporal";
}

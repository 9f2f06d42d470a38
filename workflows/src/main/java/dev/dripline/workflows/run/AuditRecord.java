package dev.dripline.workflows.run;

/**
 * An entry of the audit trail (O4) a run's workflow writes: a signal or Update sent to it from
 * outside Dripline (the Temporal CLI or Web UI), whose actor is {@code temporal}.
 *
 * @param runId the run
 * @param action what, as the API names it: {@code run.stop}, {@code run.pause}, {@code run.resume},
 *     {@code run.retry}, {@code run.cap}
 * @param outcome {@code accepted}; {@code ignored} when the run's rules refused a signal, {@code
 *     rejected} when they refused an Update (its answer's refusal)
 * @param problem why it was ignored or rejected, else {@code null}
 * @param detail what was asked (a cap change's cap), else {@code null}
 * @param dedupKey unique to this signal's handling, the same when replayed: a repeated write of it
 *     records nothing
 */
public record AuditRecord(
    long runId, String action, String outcome, String problem, String detail, String dedupKey) {}

package dev.dripline.app.audit;

import dev.dripline.store.audit.AuditEvent;
import dev.dripline.store.audit.AuditEventRepository;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the app's entries of the audit trail, each in a statement of its own (it joins no
 * transaction of the action). A write that fails does not fail the action it records, which is done
 * (or refused) by then: the entry is logged at ERROR, whole, so the log keeps what the table could
 * not.
 */
@Singleton
public class AuditTrail {
  private static final Logger log = LoggerFactory.getLogger(AuditTrail.class);

  private final AuditEventRepository events;

  public AuditTrail(AuditEventRepository events) {
    this.events = events;
  }

  /** Records {@code event}; logs it at ERROR instead if it cannot be written. */
  public void record(AuditEvent event) {
    try {
      events.record(
          event.actor(),
          event.action(),
          event.runId(),
          event.target(),
          event.subject(),
          event.detail(),
          event.outcome(),
          event.status(),
          event.problem(),
          event.dedupKey());
    } catch (RuntimeException e) {
      log.error("audit: could not record {}", event, e);
    }
  }
}

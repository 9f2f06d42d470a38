package dev.dripline.activities.run;

import dev.dripline.runtime.config.EngineConfig;
import dev.dripline.store.db.Database;
import dev.dripline.store.db.DatabaseOutage;
import io.micronaut.data.connection.exceptions.ConnectionException;
import jakarta.inject.Singleton;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a batch attempt waits out a PostgreSQL outage rather than spend the batch's attempts on it:
 * an attempt that loses its connection ({@link DatabaseOutage}), in its own statements or in the
 * definition's, waits for PostgreSQL to answer again (heartbeating all the while, up to {@code
 * database-outage-wait}) and carries on. A statement retried after its connection broke may have
 * committed already; each caller says how to retry safely (the compare-and-sets match no row a
 * second time; a claim first looks for the batch an earlier try may have taken).
 */
@Singleton
class OutageWait {
  private static final Logger LOG = LoggerFactory.getLogger(OutageWait.class);

  private final Database database;
  private final BatchLeases leases;
  private final Duration outageWait;

  OutageWait(Database database, BatchLeases leases, EngineConfig engine) {
    this.database = database;
    this.leases = leases;
    this.outageWait = engine.databaseOutageWait();
  }

  /**
   * Runs a statement of the engine's own (a repository call, in auto-commit unless it is given a
   * transaction); when PostgreSQL cannot be reached, waits until it answers and tries again, with
   * {@code again} if given (for a statement whose first try may have committed unseen).
   */
  <T> T store(Supplier<T> first, Supplier<T> again, BatchAttempt attempt) {
    Supplier<T> work = first;
    while (true) {
      try {
        return work.get();
      } catch (RuntimeException e) {
        if (!lostConnection(e) || !await(null, null, e, attempt)) {
          throw e;
        }
        if (again != null) {
          work = again;
        }
      }
    }
  }

  /**
   * Whether a failure of the definition or its record may be an outage to wait out in the same
   * attempt: a lost connection, or a fence because PostgreSQL could not renew the lease.
   */
  static boolean mayBeWaitedOut(Exception e, BatchAttempt attempt) {
    return lostConnection(e) || attempt.fenced() == BatchAttempt.Fence.LEASE_NOT_RENEWED;
  }

  /**
   * Whether {@code failure} says PostgreSQL could not be reached ({@link DatabaseOutage}), or is
   * Micronaut Data's failure to reset a connection the pool had already closed as broken: after a
   * repository call lost its connection, that reset fails ("Connection is closed", no SQLState) and
   * its failure replaces the call's own. The pool closes a connection as broken only for a
   * connection failure (its SQLState, or a timeout), so this one is an outage too.
   */
  static boolean lostConnection(Throwable failure) {
    if (DatabaseOutage.isConnectionFailure(failure)) {
      return true;
    }
    for (Throwable suppressed : failure.getSuppressed()) {
      if (DatabaseOutage.isConnectionFailure(suppressed)) {
        return true;
      }
    }
    Throwable cause = failure;
    for (int depth = 0; cause != null && depth < 32; depth++) {
      if (cause instanceof ConnectionException
          && cause.getCause() instanceof SQLException closed
          && closed.getSQLState() == null
          && "Connection is closed".equals(closed.getMessage())) {
        return true;
      }
      cause = cause.getCause() == cause ? null : cause.getCause();
    }
    return false;
  }

  /**
   * Waits up to {@code database-outage-wait} for PostgreSQL to answer, while the attempt may wait
   * ({@link BatchAttempt#mayAwaitDatabase}). An attempt fenced because PostgreSQL could not renew
   * its lease carries on afterwards if the batch it holds is still its own.
   *
   * @param runId the run, or null when the failure was no batch's
   * @param number the batch, or null
   * @return whether PostgreSQL answered in time
   */
  boolean await(Long runId, Integer number, Exception failure, BatchAttempt attempt) {
    LOG.warn(
        "Lost PostgreSQL{}: {}; waiting up to {} for it to answer",
        number == null ? "" : " in batch " + number + " of run " + runId,
        failure.toString(),
        outageWait);
    boolean back;
    attempt.awaitingDatabase(true);
    try {
      if (attempt.fenced() == BatchAttempt.Fence.LEASE_NOT_RENEWED) {
        Thread.interrupted(); // the fence's interrupt, which ended the definition, is handled
      }
      back = database.awaitAvailable(outageWait, attempt::mayAwaitDatabase);
    } finally {
      attempt.awaitingDatabase(false);
    }
    if (!back) {
      LOG.warn("PostgreSQL did not answer in time, or the attempt was cancelled; giving up");
    } else if (attempt.fenced() == BatchAttempt.Fence.LEASE_NOT_RENEWED) {
      reclaimLease(attempt);
    }
    return back;
  }

  /**
   * After an outage that kept a fenced attempt from renewing its lease: the attempt carries on if
   * the batch it holds is still its own (its lease renewed now), or if it holds none.
   */
  private void reclaimLease(BatchAttempt attempt) {
    Integer held = attempt.held();
    long sentAt = System.nanoTime();
    try {
      if (held == null || leases.renew(attempt.runId(), held, attempt) == 1) {
        if (held != null) {
          attempt.confirmed(held, sentAt);
        }
        attempt.unfence(sentAt);
      }
    } catch (RuntimeException e) {
      LOG.warn("Could not renew the lease of {} after the outage: {}", attempt, e.toString());
    }
  }
}

package dev.dripline.activities.run;

import java.sql.Connection;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt at a batch activity as the slot records know it (spec R5b): the holder written on
 * every batch the attempt takes, the lease that says it is alive, and the fence that stops it.
 *
 * <p>Another attempt takes a batch over only once the batch's lease ({@code batches.lease_until},
 * in PostgreSQL's clock) has run out. This attempt renews the lease while it holds a batch ({@link
 * BatchExecution#renewLease}) and fences itself — interrupts the thread that runs the definition
 * and cancels the engine's statement — before an unrenewed lease can run out, once its
 * start-to-close deadline has passed, or once Temporal rejected its heartbeat. So two attempts
 * never execute one batch at once, and an attempt past its timeout records nothing (a record
 * requires its attempt to be the batch's holder).
 *
 * <p>Thread-safe: the attempt's own thread takes and releases batches, a ticker renews and checks.
 */
public final class BatchAttempt {
  private static final Logger LOG = LoggerFactory.getLogger(BatchAttempt.class);

  /** Why an attempt was fenced. */
  public enum Fence {
    /** Its lease could not be renewed for most of its length (PostgreSQL unreachable). */
    LEASE_NOT_RENEWED,
    /** Its start-to-close timeout passed: Temporal has given the batch to another attempt. */
    TIMED_OUT,
    /** Temporal rejected its heartbeat: cancelled, or timed out on the server. */
    REJECTED
  }

  private final String holder;
  private final boolean retry;
  private final Duration lease;
  private final long fenceAfterNanos;
  private Thread thread;
  private long runId;
  private boolean running;
  private Integer held;
  private long confirmedAtNanos;
  private Connection statementConnection;
  private boolean awaitingDatabase;
  private volatile Fence fenced;
  private final AtomicInteger holderWaits = new AtomicInteger();

  /**
   * @param holder names the attempt in the slot records; unique per attempt
   * @param lease how long a renewal keeps the attempt's slot its own
   */
  public BatchAttempt(String holder, Duration lease) {
    this(holder, lease, false);
  }

  /**
   * @param holder names the attempt in the slot records; unique per attempt
   * @param lease how long a renewal keeps the attempt's slot its own
   * @param retry whether Temporal retries the activity with it (not its first attempt)
   */
  public BatchAttempt(String holder, Duration lease, boolean retry) {
    this.retry = retry;
    if (lease.isZero() || lease.isNegative()) {
      throw new IllegalArgumentException("a lease must be positive: " + lease);
    }
    this.holder = holder;
    this.lease = lease;
    // A third of the lease is left for the interrupt to take effect before another may take over.
    this.fenceAfterNanos = lease.toNanos() - lease.toNanos() / 3;
  }

  /** An attempt with a holder of its own, for direct calls (tests, tools). */
  public static BatchAttempt standalone(Duration lease) {
    return new BatchAttempt("direct/" + UUID.randomUUID(), lease);
  }

  /** Whether Temporal retries the activity with this attempt: an earlier one may have failed. */
  public boolean retry() {
    return retry;
  }

  public String holder() {
    return holder;
  }

  public Duration lease() {
    return lease;
  }

  /** Whether the attempt may go on: it was not fenced. */
  public boolean mayContinue() {
    return fenced == null;
  }

  /**
   * Whether the attempt may wait for PostgreSQL to answer again: not fenced, or fenced only because
   * the outage kept it from renewing its lease (it may carry on if its batch is still its own).
   */
  public boolean mayAwaitDatabase() {
    Fence why = fenced;
    return why == null || why == Fence.LEASE_NOT_RENEWED;
  }

  /** Why the attempt was fenced, or null. */
  public Fence fenced() {
    return fenced;
  }

  /** How often this attempt found its batch held by another, live attempt and waited. */
  public int holderWaits() {
    return holderWaits.get();
  }

  void waitedForHolder() {
    holderWaits.incrementAndGet();
  }

  /**
   * The attempt's work on run {@code runId} begins on the calling thread, which a fence interrupts.
   */
  synchronized void begin(long runId) {
    this.runId = runId;
    thread = Thread.currentThread();
    running = true;
  }

  /** The run whose batches the attempt holds. */
  synchronized long runId() {
    return runId;
  }

  /** The attempt's work is over; an interrupt a fence sent meanwhile is cleared. */
  void end() {
    synchronized (this) {
      running = false;
      held = null;
      statementConnection = null;
    }
    if (fenced != null) {
      Thread.interrupted();
    }
  }

  /**
   * The attempt holds batch {@code number}, its lease set by a statement sent at {@code sentAt}.
   */
  synchronized void hold(int number, long sentAtNanos) {
    held = number;
    confirmedAtNanos = sentAtNanos;
  }

  /** The attempt holds no batch (it recorded or released the one it held). */
  synchronized void release() {
    held = null;
  }

  /** The batch the attempt holds, or null. */
  synchronized Integer held() {
    return held;
  }

  /**
   * A renewal sent at {@code sentAt} extended the lease of batch {@code number}; it counts only if
   * the attempt still holds that batch.
   */
  synchronized void confirmed(int number, long sentAtNanos) {
    if (held != null && held == number && sentAtNanos - confirmedAtNanos > 0) {
      confirmedAtNanos = sentAtNanos;
    }
  }

  /**
   * The attempt waits for PostgreSQL to answer again (true) or stopped waiting: a lease fence while
   * it waits interrupts nothing — it runs nothing, and may carry on once its lease is renewed.
   */
  synchronized void awaitingDatabase(boolean waiting) {
    awaitingDatabase = waiting;
  }

  /** The connection whose statement a fence cancels (the definition's transaction), or null. */
  synchronized void statementConnection(Connection connection) {
    statementConnection = connection;
  }

  /**
   * Fences the attempt if it holds a batch whose lease was not confirmed for two thirds of the
   * lease: by the time the lease can run out, its definition has been interrupted.
   */
  void checkLease(long nowNanos) {
    boolean overdue;
    synchronized (this) {
      overdue = held != null && nowNanos - confirmedAtNanos > fenceAfterNanos;
    }
    if (overdue) {
      fence(Fence.LEASE_NOT_RENEWED);
    }
  }

  /** Stops the attempt: no further batch, the running definition interrupted, its SQL cancelled. */
  void fence(Fence why) {
    Thread toInterrupt;
    Connection toCancel;
    synchronized (this) {
      // A final fence replaces a lease fence; nothing replaces a final one.
      if (fenced == why || (fenced != null && fenced != Fence.LEASE_NOT_RENEWED)) {
        return;
      }
      fenced = why;
      boolean idle = awaitingDatabase && why == Fence.LEASE_NOT_RENEWED;
      toInterrupt = running && !idle ? thread : null;
      toCancel = running && !idle ? statementConnection : null;
    }
    LOG.warn(
        "Batch attempt {} fenced ({}): it takes no further batch and is interrupted; held {}",
        holder,
        why,
        held());
    if (toCancel != null) {
      try {
        toCancel.unwrap(PGConnection.class).cancelQuery();
      } catch (Exception e) {
        LOG.debug("Could not cancel the statement of attempt {}: {}", holder, e.toString());
      }
    }
    if (toInterrupt != null) {
      toInterrupt.interrupt();
    }
  }

  /**
   * Lets a fenced attempt carry on after PostgreSQL came back, once it renewed the lease of the
   * batch it still holds ({@code LEASE_NOT_RENEWED} only: the other fences are final).
   */
  synchronized boolean unfence(long renewedAtNanos) {
    if (fenced != Fence.LEASE_NOT_RENEWED) {
      return false;
    }
    fenced = null;
    confirmedAtNanos = renewedAtNanos;
    Thread.interrupted();
    return true;
  }

  @Override
  public String toString() {
    return holder
        + " (lease "
        + TimeUnit.NANOSECONDS.toMillis(lease.toNanos())
        + " ms"
        + (fenced == null ? "" : ", fenced: " + fenced)
        + ")";
  }
}

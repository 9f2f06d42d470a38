package dev.dripline.workflows.run;

import java.time.Instant;

/**
 * The run's progress and the loop's bookkeeping, as an immutable value of the run's state ({@link
 * RunState#counts}): only the rules ({@link RunTransitions}) make a new one.
 *
 * @param totalKeys keys in scope once every key is in a batch; null until then
 * @param processedKeys keys processed, as this workflow counts them (PostgreSQL's count at a load
 *     and a finish)
 * @param startedAt when the run started; null while pending
 * @param finishedAt when the run ended; null while it is active
 * @param throttledMillis the run's held time that has ended, as its last claim booked it
 * @param heldSinceMillis when the hold the last claim found began (the database's clock); null if
 *     none
 * @param mayHavePending pending batches may be left to claim: false once a claim found none, true
 *     again after a plan page, a retry, a chain that may have ended on its time, or a refused
 *     finish
 * @param claimSequence the next claim's token, unique across executions
 * @param batchesStartedHere batch activities this execution started
 * @param fruitlessFinishes refused finishes in a row, with nothing in flight: the second and later
 *     ones wait before the loop goes on
 * @param requeues re-queues this execution asked for: part of each one's token
 */
record RunCounts(
    Long totalKeys,
    long processedKeys,
    Instant startedAt,
    Instant finishedAt,
    long throttledMillis,
    Long heldSinceMillis,
    boolean mayHavePending,
    long claimSequence,
    int batchesStartedHere,
    int fruitlessFinishes,
    int requeues) {

  /** Nothing counted yet: batches may be pending. */
  static final RunCounts NONE = new RunCounts(null, 0, null, null, 0, null, true, 0, 0, 0, 0);

  /** The progress the run's record holds, as an execution loads it. */
  RunCounts loaded(RunSettings settings) {
    return new RunCounts(
        settings.totalKeys(),
        settings.processedKeys(),
        settings.startedAt(),
        finishedAt,
        throttledMillis,
        heldSinceMillis,
        mayHavePending,
        claimSequence,
        batchesStartedHere,
        fruitlessFinishes,
        requeues);
  }

  /**
   * The progress an execution continued as new takes over. PostgreSQL's count of processed keys as
   * this execution loaded it is exact; the carried one may have fallen short (see {@link #ended}).
   */
  RunCounts carried(RunCarryOver carried) {
    return new RunCounts(
        carried.totalKeys(),
        Math.max(processedKeys, carried.processedKeys()),
        carried.startedAtMillis() == null ? null : Instant.ofEpochMilli(carried.startedAtMillis()),
        finishedAt,
        throttledMillis,
        heldSinceMillis,
        mayHavePending,
        carried.claimSequence(),
        batchesStartedHere,
        fruitlessFinishes,
        requeues);
  }

  RunCounts withTotalKeys(Long totalKeys) {
    return new RunCounts(
        totalKeys,
        processedKeys,
        startedAt,
        finishedAt,
        throttledMillis,
        heldSinceMillis,
        mayHavePending,
        claimSequence,
        batchesStartedHere,
        fruitlessFinishes,
        requeues);
  }

  /** {@code keys} more processed. */
  RunCounts counted(long keys) {
    return withKeysAndTimes(processedKeys + keys, startedAt, finishedAt);
  }

  RunCounts withStartedAt(Instant startedAt) {
    return withKeysAndTimes(processedKeys, startedAt, finishedAt);
  }

  RunCounts withFinishedAt(Instant finishedAt) {
    return withKeysAndTimes(processedKeys, startedAt, finishedAt);
  }

  /**
   * What a finish recorded: the end time and PostgreSQL's count of processed keys — the count this
   * workflow adds up from batch results falls short when a worker died mid-chain (its retried
   * attempt reports only what it completed itself).
   */
  RunCounts ended(FinishResult finish) {
    long processed = finish.processedKeys() != null ? finish.processedKeys() : processedKeys;
    return withKeysAndTimes(processed, startedAt, finish.finishedAt());
  }

  private RunCounts withKeysAndTimes(long processedKeys, Instant startedAt, Instant finishedAt) {
    return new RunCounts(
        totalKeys,
        processedKeys,
        startedAt,
        finishedAt,
        throttledMillis,
        heldSinceMillis,
        mayHavePending,
        claimSequence,
        batchesStartedHere,
        fruitlessFinishes,
        requeues);
  }

  /** What a claim found of the run's held time. */
  RunCounts heldTime(ClaimResult claim) {
    return new RunCounts(
        totalKeys,
        processedKeys,
        startedAt,
        finishedAt,
        Math.max(throttledMillis, claim.throttledMillis()),
        claim.heldSinceMillis(),
        mayHavePending,
        claimSequence,
        batchesStartedHere,
        fruitlessFinishes,
        requeues);
  }

  RunCounts withMayHavePending(boolean mayHavePending) {
    return withLoop(mayHavePending, claimSequence, batchesStartedHere, fruitlessFinishes, requeues);
  }

  /** The claim token {@link #claimSequence} taken: the next claim has the next one. */
  RunCounts claimTaken() {
    return withLoop(
        mayHavePending, claimSequence + 1, batchesStartedHere, fruitlessFinishes, requeues);
  }

  /** One more batch activity started by this execution. */
  RunCounts batchStarted() {
    return withLoop(
        mayHavePending, claimSequence, batchesStartedHere + 1, fruitlessFinishes, requeues);
  }

  RunCounts withFruitlessFinishes(int fruitlessFinishes) {
    return withLoop(mayHavePending, claimSequence, batchesStartedHere, fruitlessFinishes, requeues);
  }

  /** The re-queue token {@link #requeues} taken: the next re-queue has the next one. */
  RunCounts requeueTaken() {
    return withLoop(
        mayHavePending, claimSequence, batchesStartedHere, fruitlessFinishes, requeues + 1);
  }

  private RunCounts withLoop(
      boolean mayHavePending,
      long claimSequence,
      int batchesStartedHere,
      int fruitlessFinishes,
      int requeues) {
    return new RunCounts(
        totalKeys,
        processedKeys,
        startedAt,
        finishedAt,
        throttledMillis,
        heldSinceMillis,
        mayHavePending,
        claimSequence,
        batchesStartedHere,
        fruitlessFinishes,
        requeues);
  }
}

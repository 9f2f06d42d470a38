package dev.dripline.workflows.run;

/**
 * What one execution of a run workflow hands to the next at continue-as-new. Slots are drained
 * before the hand-over, so nothing in flight needs to be carried.
 *
 * @param effectiveCap the cap in force at the hand-over, for whoever reads the input; a new
 *     execution computes its own from its settings
 * @param paused whether the run was paused
 * @param stopRequested whether a stop was requested
 * @param retryRequested whether a retry still has to be applied
 * @param planningDone whether every key in scope has been cut into batches
 * @param totalKeys keys in scope once planning is done
 * @param processedKeys sum of completed batch sizes so far
 * @param startedAtMillis when the run first started, epoch millis
 * @param claimSequence the next claim token, so claims stay unique across executions
 * @param endedStatus the status the run ended in ({@code failed} or {@code stopped}) if its
 *     workflow continued as new while it waited for a retry; {@code null} for a live run
 * @param endedAtMillis when the run ended, epoch millis, if it has
 * @param retryDeadlineMillis until when (workflow time, epoch millis) an ended run's workflow waits
 *     for a retry
 */
public record RunCarryOver(
    int effectiveCap,
    boolean paused,
    boolean stopRequested,
    boolean retryRequested,
    boolean planningDone,
    Long totalKeys,
    long processedKeys,
    Long startedAtMillis,
    long claimSequence,
    RunStatus endedStatus,
    Long endedAtMillis,
    Long retryDeadlineMillis) {}

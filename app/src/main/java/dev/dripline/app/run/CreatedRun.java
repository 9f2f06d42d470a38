package dev.dripline.app.run;

/**
 * The answer to a run creation.
 *
 * @param run the run
 * @param created false if an earlier request with the same {@code Idempotency-Key} created it
 */
record CreatedRun(RunResponse run, boolean created) {}

package dev.dripline.run;

/** One batch to process, with what the activity needs to find the definition and the run. */
public record BatchWork(long runId, String backfill, BatchRef batch) {}

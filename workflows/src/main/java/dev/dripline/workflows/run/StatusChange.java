package dev.dripline.workflows.run;

/** A change between {@link RunStatus#RUNNING} and {@link RunStatus#PAUSED}. */
public record StatusChange(long runId, RunStatus status) {}

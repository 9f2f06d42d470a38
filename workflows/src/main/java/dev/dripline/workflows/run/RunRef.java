package dev.dripline.workflows.run;

/** Names a run. */
public record RunRef(long runId) {}

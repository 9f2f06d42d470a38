package dev.dripline.run;

/** Names a run. */
public record RunRef(long runId) {}

package dev.dripline.workflows.run;

/** A batch whose attempts are exhausted, with the error of its last attempt. */
public record BatchFailure(long runId, int number, String error) {}

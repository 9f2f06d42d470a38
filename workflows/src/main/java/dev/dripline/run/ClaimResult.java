package dev.dripline.run;

import java.util.List;

/** Batches claimed, now enqueued and holding a slot, in number order. */
public record ClaimResult(List<BatchRef> batches) {}

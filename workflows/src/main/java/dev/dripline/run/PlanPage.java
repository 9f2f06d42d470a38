package dev.dripline.run;

/**
 * @param batchesCreated batches saved by this call
 * @param done every key in scope (up to {@code maxRecords}) is now in a batch
 * @param totalKeys keys in scope, once done
 */
public record PlanPage(int batchesCreated, boolean done, Long totalKeys) {}

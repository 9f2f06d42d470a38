package dev.dripline.store.run;

import io.micronaut.core.annotation.Introspected;
import java.time.Instant;

/**
 * When a completed batch finished and how many keys it held ({@link
 * BatchRepository#recentCompletions}).
 *
 * @param finishedAt when it completed
 * @param size its keys
 */
@Introspected
public record CompletionPoint(Instant finishedAt, int size) {}

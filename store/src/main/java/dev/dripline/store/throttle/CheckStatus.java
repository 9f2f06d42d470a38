package dev.dripline.store.throttle;

import java.time.Instant;

/**
 * A check's state as the rule leaves it.
 *
 * @param state clear, over or unknown
 * @param holding whether it holds the runs it applies to (over, or unknown with {@code hold})
 * @param since when the check last started or stopped holding (or was first evaluated)
 */
public record CheckStatus(CheckState state, boolean holding, Instant since) {}

package dev.dripline.workflows.targets;

/**
 * @param name the target
 * @param error what failed
 * @param permanent the definition can never plan this target: needs_resync
 * @param jitterDraw a uniform draw from [0, 1) for the backoff's jitter
 */
public record PlanningFailure(String name, String error, boolean permanent, double jitterDraw) {}

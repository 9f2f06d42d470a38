package dev.dripline.workflows.targets;

/** Names a target. */
public record TargetRef(String name) {}

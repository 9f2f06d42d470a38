package dev.dripline.target;

/** Names a target. */
public record TargetRef(String name) {}

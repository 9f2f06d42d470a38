package dev.dripline.app.targets;

/**
 * A validated target, ready to be inserted.
 *
 * @param name the target's name
 * @param backfill the definition's name
 * @param optionsJson normalized options as canonical JSON
 * @param group the capacity group, or {@code null}
 */
record NewTarget(String name, String backfill, String optionsJson, String group) {}

package dev.dripline.app.targets;

import io.micronaut.json.tree.JsonNode;
import io.micronaut.serde.annotation.Serdeable;
import jakarta.validation.constraints.NotNull;

/**
 * The body of {@code POST /api/targets/{name}/live-batches}.
 *
 * @param payload the live batch's work, a JSON object kept as it was sent
 */
@Serdeable
record LiveBatchRequest(@NotNull(message = "is required: a JSON object") JsonNode payload) {}

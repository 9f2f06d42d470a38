package dev.dripline.app.targets;

import io.micronaut.json.tree.JsonNode;
import io.micronaut.serde.annotation.Serdeable;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.constraints.NotNull;

/**
 * The body of {@code POST /api/targets/{name}/live-batches}.
 *
 * @param payload the live batch's work, a JSON object kept as it was sent
 */
@Serdeable
@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
record LiveBatchRequest(
    @NotNull(message = "is required: a JSON object")
        @Schema(implementation = Object.class, type = "object")
        JsonNode payload) {}

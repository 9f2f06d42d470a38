package dev.dripline.app.run;

import io.micronaut.serde.annotation.Serdeable;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

/**
 * The body of {@code PATCH /api/runs/{id}} (spec R9).
 *
 * @param maxParallelBatches the new requested cap
 */
@Serdeable
@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
record CapChangeRequest(
    @NotNull(message = "is required")
        @Min(value = 1, message = "must be at least 1")
        @Max(value = Integer.MAX_VALUE, message = "must be at most 2147483647")
        Long maxParallelBatches) {}

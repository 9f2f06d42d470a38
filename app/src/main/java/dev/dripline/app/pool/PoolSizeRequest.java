package dev.dripline.app.pool;

import io.micronaut.serde.annotation.Serdeable;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

/**
 * The body of {@code PUT /api/pools/{name}} (P5).
 *
 * @param size most batches of the pool's runs that may hold a slot at once
 */
@Serdeable
@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
record PoolSizeRequest(
    @NotNull(message = "is required")
        @Min(value = 1, message = "must be at least 1")
        @Max(value = Integer.MAX_VALUE, message = "must be at most 2147483647")
        Long size) {}

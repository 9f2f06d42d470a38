package dev.dripline.app.run;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.time.Instant;
import java.util.Map;

/**
 * The body of {@code POST /api/runs} (spec R1), checked as far as it can be without the catalogue;
 * the service checks the backfill and its options against it. Whole numbers are read as {@code
 * Long} so that a value beyond the {@code int} range is reported by its bound.
 *
 * @param backfill the definition's name
 * @param options option values as parsed from JSON; empty if absent (or malformed)
 * @param batchSize keys per batch, or {@code null} for the definition's default
 * @param maxRecords cap on keys, or {@code null}
 * @param maxParallelBatches the requested cap, or {@code null}
 * @param startAt the scheduled start, or {@code null} to start at once
 * @param targetBatchDuration how long a batch should take, as an ISO-8601 duration, to tune the
 *     run's batch sizes (P4); {@code null} for its definition's, if any
 * @param minBatchSize least size of a tuned run's batches, or {@code null} for its definition's
 * @param maxBatchSize largest size of a tuned run's batches, or {@code null} for its definition's
 * @param maxFailedBatchesPercent the run's failure budget (P6b), or {@code null} for its
 *     definition's
 * @param failureBudgetMinBatches batches that must finish before the budget applies, or {@code
 *     null} for 20
 * @param pool the pool the run draws from (P5), or {@code null} for its definition's
 * @param niceRatio how much the run's lanes rest after each batch, times the batch's duration, 0 to
 *     100; {@code null} for its definition's
 */
@Serdeable
@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
record CreateRunRequest(
    @NotNull(message = "is required") @NotBlank(message = "must be a backfill name")
        String backfill,
    @Nullable
        @Schema(
            description = "option values as the definition's options schema declares them",
            additionalProperties = Schema.AdditionalPropertiesValue.TRUE)
        Map<String, Object> options,
    @Min(value = 1, message = "must be at least 1")
        @Max(value = Integer.MAX_VALUE, message = "must be at most 2147483647")
        @Nullable
        Long batchSize,
    @Min(value = 1, message = "must be at least 1") @Nullable Long maxRecords,
    @Min(value = 1, message = "must be at least 1")
        @Max(value = Integer.MAX_VALUE, message = "must be at most 2147483647")
        @Nullable
        Long maxParallelBatches,
    @Schedulable @Nullable Instant startAt,
    @Nullable @Schema(format = "duration", example = "PT2S") String targetBatchDuration,
    @Min(value = 1, message = "must be at least 1")
        @Max(value = Integer.MAX_VALUE, message = "must be at most 2147483647")
        @Nullable
        Long minBatchSize,
    @Min(value = 1, message = "must be at least 1")
        @Max(value = Integer.MAX_VALUE, message = "must be at most 2147483647")
        @Nullable
        Long maxBatchSize,
    @DecimalMin(value = "0", message = "must be between 0 and 100")
        @DecimalMax(value = "100", message = "must be between 0 and 100")
        @Nullable
        Double maxFailedBatchesPercent,
    @Min(value = 1, message = "must be at least 1")
        @Max(value = Integer.MAX_VALUE, message = "must be at most 2147483647")
        @Nullable
        Long failureBudgetMinBatches,
    @Size(min = 1, max = 100, message = "must be a pool name") @Nullable String pool,
    @DecimalMin(value = "0", message = "must be between 0 and 100")
        @DecimalMax(value = "100", message = "must be between 0 and 100")
        @Nullable
        Double niceRatio) {

  CreateRunRequest {
    options = options == null ? Map.of() : options;
  }
}

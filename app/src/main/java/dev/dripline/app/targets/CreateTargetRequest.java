package dev.dripline.app.targets;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import io.swagger.v3.oas.annotations.media.Schema;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import java.util.Map;

/**
 * The body of {@code POST /api/targets} (spec T1), checked as far as it can be without the
 * catalogue; the service checks the backfill and its options against it.
 *
 * @param name the target's name
 * @param backfill the definition's name
 * @param options option values as parsed from JSON; empty if absent (or malformed)
 * @param group the capacity group, or {@code null} for none
 */
@Serdeable
@Schema(additionalProperties = Schema.AdditionalPropertiesValue.FALSE)
record CreateTargetRequest(
    @NotNull(message = "is required")
        @Pattern(regexp = TargetRequests.NAME_PATTERN, message = TargetRequests.NAME_RULE)
        String name,
    @NotNull(message = "is required") @NotBlank(message = "must be a backfill name")
        String backfill,
    @Nullable
        @Schema(
            description = "option values as the definition's options schema declares them",
            additionalProperties = Schema.AdditionalPropertiesValue.TRUE)
        Map<String, Object> options,
    @Pattern(regexp = TargetRequests.NAME_PATTERN, message = TargetRequests.NAME_RULE) @Nullable
        String group) {

  CreateTargetRequest {
    options = options == null ? Map.of() : options;
  }
}

package dev.dripline.app.throttle;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.util.List;

/**
 * Answer of {@code GET /api/throttle}.
 *
 * @param hold the brake (who, since, reason); always {@code null} until the brake exists
 * @param checks every evaluated health check, by name
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record ThrottleResponse(@Nullable Object hold, List<CheckResponse> checks) {}

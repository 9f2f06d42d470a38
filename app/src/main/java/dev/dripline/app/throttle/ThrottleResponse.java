package dev.dripline.app.throttle;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;
import java.util.List;

/**
 * Answer of {@code GET /api/throttle}, and of the requests that change it.
 *
 * @param hold the brake (who, since, reason), or {@code null} while it is off
 * @param checks every evaluated health check, by name
 */
@Serdeable
@JsonInclude(JsonInclude.Include.ALWAYS)
public record ThrottleResponse(@Nullable HoldResponse hold, List<CheckResponse> checks) {}

package dev.dripline.runtime.temporal;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.config.MeterFilter;

/**
 * Gives the Temporal SDK's client metrics the tag {@code update_name} everywhere. The SDK fills the
 * tag keys of its client scope with {@code none} (operation, signal_name, query_type, …) but adds
 * {@code update_name} only to an Update's calls (a retry, a cap change); Prometheus wants one set
 * of tag keys per metric name and drops whichever meter comes second, so either the Updates or
 * every other call of {@code temporal_long_request_latency} and the like went missing from {@code
 * /prometheus}. The rest get {@code update_name="none"}, as the SDK's other keys do.
 */
public final class TemporalMeterFilter implements MeterFilter {
  static final String UPDATE_NAME = "update_name";

  /** A key the SDK's client scope always carries: marks its meters. */
  private static final String CLIENT_SCOPE_KEY = "signal_name";

  @Override
  public Meter.Id map(Meter.Id id) {
    boolean clientScope =
        id.getName().startsWith("temporal_") && id.getTag(CLIENT_SCOPE_KEY) != null;
    if (clientScope && id.getTag(UPDATE_NAME) == null) {
      return id.withTag(Tag.of(UPDATE_NAME, "none"));
    }
    return id;
  }
}

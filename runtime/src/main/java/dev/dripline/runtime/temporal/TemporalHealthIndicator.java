package dev.dripline.runtime.temporal;

import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.HealthIndicator;
import io.micronaut.management.health.indicator.HealthResult;
import io.temporal.api.workflowservice.v1.GetSystemInfoRequest;
import io.temporal.serviceclient.WorkflowServiceStubs;
import jakarta.inject.Singleton;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Reports whether the Temporal frontend answers, as part of {@code GET /health}. */
@Singleton
public class TemporalHealthIndicator implements HealthIndicator {
  private final WorkflowServiceStubs stubs;

  public TemporalHealthIndicator(WorkflowServiceStubs stubs) {
    this.stubs = stubs;
  }

  @Override
  public Publisher<HealthResult> getResult() {
    return Mono.fromCallable(this::check).subscribeOn(Schedulers.boundedElastic());
  }

  private HealthResult check() {
    try {
      stubs
          .blockingStub()
          .withDeadlineAfter(2, TimeUnit.SECONDS)
          .getSystemInfo(GetSystemInfoRequest.getDefaultInstance());
      return HealthResult.builder("temporal", HealthStatus.UP).build();
    } catch (RuntimeException e) {
      return HealthResult.builder("temporal", HealthStatus.DOWN)
          .details(Map.of("error", String.valueOf(e.getMessage())))
          .build();
    }
  }
}

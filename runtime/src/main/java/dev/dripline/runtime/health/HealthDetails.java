package dev.dripline.runtime.health;

import dev.dripline.runtime.config.DeploymentProfile;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.annotation.Value;
import io.micronaut.context.env.Environment;
import io.micronaut.context.event.BeanCreatedEvent;
import io.micronaut.context.event.BeanCreatedEventListener;
import io.micronaut.management.endpoint.health.DetailsVisibility;
import io.micronaut.management.endpoint.health.HealthEndpoint;
import jakarta.inject.Singleton;

/**
 * Who sees the details of {@code /health}: its indicators name the JDBC URL (host, port, database),
 * PostgreSQL's exact version and the disk's free space. Under the production profile ({@link
 * DeploymentProfile}) only an authenticated caller (the app's viewer or operator token) sees them;
 * an anonymous one, a probe or a load balancer, gets the status alone, with the same 200 or 503. A
 * worker process takes no tokens, so under production its {@code /health} shows the status only.
 * Outside production the details stay open, as {@code endpoints.health.details-visible} says.
 */
@Singleton
@Requires(beans = HealthEndpoint.class)
final class HealthDetails implements BeanCreatedEventListener<HealthEndpoint> {
  private final boolean production;

  HealthDetails(Environment environment, @Value("${dripline.profile:development}") String profile) {
    this.production = DeploymentProfile.production(environment, profile);
  }

  @Override
  public HealthEndpoint onCreated(BeanCreatedEvent<HealthEndpoint> event) {
    HealthEndpoint endpoint = event.getBean();
    if (production) {
      endpoint.setDetailsVisible(DetailsVisibility.AUTHENTICATED);
    }
    return endpoint;
  }
}

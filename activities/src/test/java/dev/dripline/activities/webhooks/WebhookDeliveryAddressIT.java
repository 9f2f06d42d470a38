package dev.dripline.activities.webhooks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.dripline.runtime.config.WebhookConfig;
import dev.dripline.runtime.webhooks.WebhookAddresses;
import dev.dripline.store.db.Database;
import dev.dripline.store.webhooks.WebhookRepository;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.temporal.failure.ApplicationFailure;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The address rule at delivery (spec O3): the delivery resolves the endpoint's host itself, and
 * under the production profile a host that now resolves to a loopback address (DNS rebinding after
 * registration) is refused, recorded and not retried; outside it the post goes to the address the
 * resolver gave, with the URL's host as its {@code Host} header. The resolver is a stub that maps a
 * name no real DNS knows to the loopback address, where a receiver listens.
 */
@MicronautTest(environments = "test", startApplication = false, transactional = false)
class WebhookDeliveryAddressIT {
  private static final String HOST =
      "rebind-" + UUID.randomUUID().toString().substring(0, 8) + ".invalid";

  @Inject WebhookRepository webhooks;
  @Inject WebhookConfig config;
  @Inject Database database;

  private HttpServer receiver;
  private final List<String> hostHeaders = new CopyOnWriteArrayList<>();
  private long endpointId;
  private long eventId;
  private long deliveryId;

  @BeforeEach
  void setUp() throws IOException {
    receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    receiver.createContext(
        "/hook",
        exchange -> {
          hostHeaders.add(exchange.getRequestHeaders().getFirst("Host"));
          exchange.getRequestBody().readAllBytes();
          exchange.sendResponseHeaders(204, -1);
          exchange.close();
        });
    receiver.start();
    String url = "http://" + HOST + ":" + receiver.getAddress().getPort() + "/hook";
    endpointId =
        id(
            "insert into webhook_endpoints (url, events, secret) values (?, '{test.rebind}',"
                + " 'whsec_c2VjcmV0') returning id",
            url);
    eventId =
        id("insert into webhook_events (type, data) values ('test.rebind', '{}') returning id");
    deliveryId =
        id(
            "insert into webhook_deliveries (endpoint_id, event_id) values (?, ?) returning id",
            endpointId,
            eventId);
  }

  @AfterEach
  void tearDown() {
    receiver.stop(0);
    id("delete from webhook_endpoints where id = ? returning id", endpointId);
    id("delete from webhook_events where id = ? returning id", eventId);
  }

  /** Resolves {@link #HOST} to the loopback address, where the receiver listens. */
  private static InetAddress[] rebound(String host) throws UnknownHostException {
    if (!host.equals(HOST)) {
      throw new UnknownHostException(host);
    }
    return new InetAddress[] {InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1})};
  }

  @Test
  void productionRefusesAHostThatNowResolvesToLoopbackRecordsItAndDoesNotRetry() {
    WebhookActivitiesImpl activities =
        new WebhookActivitiesImpl(
            webhooks,
            config,
            new WebhookAddresses(true, WebhookDeliveryAddressIT::rebound),
            Clock.systemUTC());

    assertThatThrownBy(() -> activities.deliver(deliveryId))
        .isInstanceOfSatisfying(
            ApplicationFailure.class,
            failure -> {
              assertThat(failure.isNonRetryable()).isTrue();
              assertThat(failure.getType()).isEqualTo(WebhookActivitiesImpl.ADDRESS_REFUSED);
            });
    assertThat(hostHeaders).isEmpty();
    assertThat(row())
        .isEqualTo(
            "retrying 1 null refused: host "
                + HOST
                + " resolves to a loopback, link-local, unspecified or multicast address, which"
                + " the production profile does not allow");
  }

  @Test
  void outsideProductionThePostGoesToTheResolvedAddressWithTheUrlsHost() {
    WebhookActivitiesImpl activities =
        new WebhookActivitiesImpl(
            webhooks,
            config,
            new WebhookAddresses(false, WebhookDeliveryAddressIT::rebound),
            Clock.systemUTC());

    activities.deliver(deliveryId);

    assertThat(hostHeaders).containsExactly(HOST + ":" + receiver.getAddress().getPort());
    assertThat(row()).isEqualTo("delivered 1 204 null");
  }

  /** The delivery's status, attempts, last response code and last error. */
  private String row() {
    return database.inTransaction(
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement(
                  "select status || ' ' || attempts || ' ' || coalesce(last_response_code::text,"
                      + " 'null') || ' ' || coalesce(last_error, 'null')"
                      + " from webhook_deliveries where id = ?")) {
            query.setLong(1, deliveryId);
            try (ResultSet rows = query.executeQuery()) {
              rows.next();
              return rows.getString(1);
            }
          }
        });
  }

  private long id(String sql, Object... args) {
    return database.inTransaction(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
              statement.setObject(i + 1, args[i]);
            }
            try (ResultSet rows = statement.executeQuery()) {
              return rows.next() ? rows.getLong(1) : 0L;
            }
          }
        });
  }
}

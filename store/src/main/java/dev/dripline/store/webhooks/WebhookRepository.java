package dev.dripline.store.webhooks;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.Page;
import io.micronaut.data.model.Pageable;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;
import java.util.List;
import java.util.Optional;

/**
 * Tables {@code webhook_endpoints}, {@code webhook_events} and {@code webhook_deliveries} (spec O3,
 * migration V38). The API registers, lists and deletes endpoints and pages their deliveries; the
 * events and their delivery rows are written by triggers, in the transaction of the status change
 * they report; a worker's dispatcher starts a delivery's workflow and marks it dispatched, and the
 * delivery's activity reads the message and records each attempt. No read of the API selects the
 * secret.
 */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface WebhookRepository extends GenericRepository<WebhookEndpointEntry, Long> {
  /** An endpoint as the API shows it, over the row {@code e}. */
  String ENDPOINT =
      "select e.id, e.url, array_to_string(e.events, ',') as events, e.created_by, e.created_at"
          + " from webhook_endpoints e";

  /** A fresh endpoint id, drawn ahead of {@link #insert}. */
  @Query("select nextval(pg_get_serial_sequence('webhook_endpoints', 'id'))")
  long nextId();

  /** Registers endpoint {@code id}. */
  @Query(
      "insert into webhook_endpoints (id, url, events, secret, created_by)"
          + " values (:id, :url, cast(:events as text[]), :secret, :createdBy)")
  int insert(long id, String url, String[] events, String secret, @Nullable String createdBy);

  /** Every endpoint, oldest first. */
  @Query(ENDPOINT + " order by e.id")
  List<WebhookEndpoint> list();

  /** Endpoint {@code id}, if registered. */
  @Query(ENDPOINT + " where e.id = :id")
  Optional<WebhookEndpoint> find(long id);

  /**
   * Deletes endpoint {@code id} with its deliveries; a delivery's workflow then finds nothing to
   * post and ends.
   *
   * @return 1 if it existed
   */
  @Query("delete from webhook_endpoints where id = :id")
  int delete(long id);

  /** A delivery, with its event's type, over the rows {@code d} and {@code v}. */
  String DELIVERY =
      "select d.id, d.event_id, v.type as event_type, d.status, d.attempts,"
          + " d.last_response_code, d.last_error, v.created_at, d.delivered_at"
          + " from webhook_deliveries d join webhook_events v on v.id = d.event_id";

  /** A page of endpoint {@code endpointId}'s deliveries, newest first. */
  @Query(
      value = DELIVERY + " where d.endpoint_id = :endpointId order by d.id desc",
      countQuery = "select count(*) from webhook_deliveries d where d.endpoint_id = :endpointId")
  Page<WebhookDeliveryView> deliveries(long endpointId, Pageable pageable);

  // --- delivery, by the worker ---------------------------------------------------------------

  /**
   * Up to {@code limit} deliveries whose workflow is not started, oldest first, locked for this
   * transaction; rows another dispatcher holds are skipped.
   */
  @Query(
      "select id, event_id, endpoint_id from webhook_deliveries where dispatched_at is null"
          + " order by id limit :limit for update skip locked")
  List<UndispatchedDelivery> lockUndispatched(int limit);

  /** Marks deliveries {@code ids} dispatched: their workflows are started. */
  @Query(
      "update webhook_deliveries set dispatched_at = now()"
          + " where id = any (cast(:ids as bigint[])) and dispatched_at is null")
  int markDispatched(Long[] ids);

  /** What delivery {@code id} posts; empty once its endpoint is deleted. */
  @Query(
      "select d.id as delivery_id, d.status, e.url, e.secret, v.id as event_id,"
          + " v.type as event_type, cast(v.data as text) as data, v.created_at"
          + " from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id"
          + " join webhook_events v on v.id = d.event_id where d.id = :id")
  Optional<WebhookMessage> message(long id);

  /**
   * Records an attempt of delivery {@code id}: {@code delivered} on a 2xx, else {@code retrying}. A
   * delivery already delivered stays so.
   */
  @Query(
      "update webhook_deliveries set attempts = attempts + 1, last_response_code = :code,"
          + " last_error = :error,"
          + " status = case when :delivered then 'delivered' else 'retrying' end,"
          + " delivered_at = case when :delivered then now() else null end"
          + " where id = :id and status <> 'delivered'")
  int recordAttempt(long id, boolean delivered, @Nullable Integer code, @Nullable String error);

  /** Records that delivery {@code id}'s retries ran out. */
  @Query(
      "update webhook_deliveries set status = 'failed' where id = :id"
          + " and status in ('pending', 'retrying')")
  int recordGivenUp(long id);
}

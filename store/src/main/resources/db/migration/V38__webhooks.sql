-- Signed webhooks (spec O3). An endpoint subscribes to event types; the event of a status change
-- is written by a trigger in the transaction of the change itself (an outbox), with one delivery
-- row per subscribed endpoint. A worker's dispatcher starts one Temporal workflow per delivery row
-- not yet dispatched; the workflow's activity posts it and records each attempt on the row. An
-- event no endpoint subscribes to is not written: without endpoints the triggers write nothing.

create table webhook_endpoints (
    id         bigserial primary key,
    url        text        not null,
    events     text[]      not null check (cardinality(events) > 0),
    -- the signing key, whsec_<base64>: returned once at creation, never read by the API again
    secret     text        not null,
    created_by text,
    created_at timestamptz not null default now()
);

create table webhook_events (
    id         bigserial primary key,
    type       text        not null,
    data       jsonb       not null,
    created_at timestamptz not null default now()
);

create table webhook_deliveries (
    id                 bigserial primary key,
    endpoint_id        bigint      not null references webhook_endpoints (id) on delete cascade,
    event_id           bigint      not null references webhook_events (id) on delete cascade,
    status             text        not null default 'pending'
        check (status in ('pending', 'retrying', 'delivered', 'failed')),
    attempts           integer     not null default 0,
    last_response_code integer,
    last_error         text,
    -- when a dispatcher started the delivery's workflow; null: not started yet
    dispatched_at      timestamptz,
    created_at         timestamptz not null default now(),
    delivered_at       timestamptz,
    unique (event_id, endpoint_id)
);

create index webhook_deliveries_undispatched on webhook_deliveries (id) where dispatched_at is null;
create index webhook_deliveries_by_endpoint on webhook_deliveries (endpoint_id, id);

-- Records event p_type with p_data for every endpoint subscribed to it; nothing without one.
create function dripline_webhook_event(p_type text, p_data jsonb) returns void
language plpgsql
as $$
declare
    v_event bigint;
begin
    if not exists (select 1 from webhook_endpoints e where p_type = any (e.events)) then
        return;
    end if;
    insert into webhook_events (type, data) values (p_type, p_data) returning id into v_event;
    insert into webhook_deliveries (endpoint_id, event_id)
    select e.id, v_event from webhook_endpoints e where p_type = any (e.events);
end $$;

-- run.started when a run first starts; run.completed, run.failed, run.stopped when it ends.
create function dripline_webhook_run_event() returns trigger
language plpgsql
as $$
declare
    v_type text;
begin
    if new.status = 'running' and old.started_at is null then
        v_type := 'run.started';
    elsif new.status in ('completed', 'failed', 'stopped') then
        v_type := 'run.' || new.status;
    else
        return null;
    end if;
    perform dripline_webhook_event(v_type, jsonb_build_object(
        'runId', new.id, 'backfill', new.backfill, 'status', new.status, 'error', new.error,
        'target', new.target_name, 'createdBy', new.created_by,
        'startedAt', new.started_at, 'finishedAt', new.finished_at));
    return null;
end $$;

create trigger runs_webhook_events
    after update of status on runs
    for each row when (old.status is distinct from new.status)
    execute function dripline_webhook_run_event();

-- target.failing when a target becomes failing (T6: not primed, and a streak of at least 3,
-- FailureStreak.FAILING_THRESHOLD, or needs_resync); target.primed when it becomes primed.
create function dripline_webhook_target_event() returns trigger
language plpgsql
as $$
declare
    v_type text;
begin
    if new.state = 'primed' and old.state <> 'primed' then
        v_type := 'target.primed';
    elsif new.state <> 'primed'
          and (new.consecutive_failures >= 3 or new.state = 'needs_resync')
          and not (old.state <> 'primed'
                   and (old.consecutive_failures >= 3 or old.state = 'needs_resync')) then
        v_type := 'target.failing';
    else
        return null;
    end if;
    perform dripline_webhook_event(v_type, jsonb_build_object(
        'target', new.name, 'backfill', new.backfill, 'state', new.state,
        'consecutiveFailures', new.consecutive_failures, 'firstFailedAt', new.first_failed_at,
        'lastError', new.last_error, 'currentRunId', new.current_run_id));
    return null;
end $$;

create trigger targets_webhook_events
    after update of state, consecutive_failures on targets
    for each row
    when (old.state is distinct from new.state
          or old.consecutive_failures is distinct from new.consecutive_failures)
    execute function dripline_webhook_target_event();

-- throttle.held / throttle.released: the brake put on or taken off, a check starting or
-- stopping to hold (or forgotten while holding).
create function dripline_webhook_brake_event() returns trigger
language plpgsql
as $$
begin
    if tg_op = 'INSERT' then
        perform dripline_webhook_event('throttle.held', jsonb_build_object(
            'hold', 'brake', 'reason', new.reason, 'heldBy', new.held_by, 'since', new.since));
    else
        perform dripline_webhook_event('throttle.released', jsonb_build_object(
            'hold', 'brake', 'reason', old.reason, 'heldBy', old.held_by, 'since', old.since));
    end if;
    return null;
end $$;

create trigger throttle_brake_webhook_events
    after insert or delete on throttle_brake
    for each row execute function dripline_webhook_brake_event();

create function dripline_webhook_check_event() returns trigger
language plpgsql
as $$
begin
    if tg_op = 'DELETE' then
        if old.holding then
            perform dripline_webhook_event('throttle.released', jsonb_build_object(
                'hold', old.name, 'kind', old.kind, 'state', 'forgotten'));
        end if;
    elsif new.holding and (tg_op = 'INSERT' or not old.holding) then
        perform dripline_webhook_event('throttle.held', jsonb_build_object(
            'hold', new.name, 'kind', new.kind, 'state', new.state, 'value', new.value,
            'threshold', new.threshold, 'resumeBelow', new.resume_below, 'error', new.error,
            'since', new.since));
    elsif not new.holding and tg_op = 'UPDATE' and old.holding then
        perform dripline_webhook_event('throttle.released', jsonb_build_object(
            'hold', new.name, 'kind', new.kind, 'state', new.state, 'value', new.value,
            'threshold', new.threshold, 'resumeBelow', new.resume_below, 'since', new.since));
    end if;
    return null;
end $$;

create trigger throttle_checks_webhook_events
    after insert or update or delete on throttle_checks
    for each row execute function dripline_webhook_check_event();

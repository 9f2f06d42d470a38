-- Targets (PRODUCT §2, §4): destinations that must be backfilled before live work may flow.

create table targets (
    name                     text primary key,
    backfill                 text        not null,
    options                  jsonb       not null,
    group_name               text,
    state                    text        not null
        check (state in ('pending_backfill', 'backfilling', 'primed', 'needs_resync')),
    consecutive_failures     integer     not null default 0 check (consecutive_failures >= 0),
    first_failed_at          timestamptz,
    last_error               text,
    last_attempt_at          timestamptz,
    -- the planner backoff's own anchor; never derived from updated_at (T3)
    next_attempt_at          timestamptz,
    -- no foreign key: a run may be deleted while its target lives on
    current_run_id           bigint,
    -- processed_keys of the current run when last observed, to recognise forward progress (T4)
    observed_processed_keys  bigint      not null default 0,
    created_at               timestamptz not null default now(),
    updated_at               timestamptz not null default now(),
    primed_at                timestamptz
);

create index targets_state_idx on targets (state, next_attempt_at);
create index targets_group_idx on targets (group_name) where state = 'backfilling';

-- Live work for a target, applied in arrival (id) order once the target is primed.
create table live_batches (
    id          bigserial primary key,
    target_name text        not null references targets (name) on delete cascade,
    payload     jsonb       not null,
    status      text        not null default 'queued'
        check (status in ('queued', 'applied', 'failed')),
    error       text,
    created_at  timestamptz not null default now(),
    applied_at  timestamptz
);

create index live_batches_queue_idx on live_batches (target_name, id) where status = 'queued';

-- Which target a run backfills, if any. A target's run may share backfill and options with other
-- runs (two targets of one definition), so the target takes part in the one-active-run rule.
alter table runs add column target_name text;
drop index runs_one_active;
create unique index runs_one_active
    on runs (backfill, options_key, coalesce(max_records, -1), coalesce(target_name, ''))
    where status in ('pending', 'running', 'paused');

-- Counters kept in PostgreSQL so that every process reports the same totals.
create table dripline_counters (
    name  text primary key,
    value bigint not null default 0
);
insert into dripline_counters (name, value) values ('planning_failures_total', 0);

-- The latest snapshot of the PostgreSQL-derived gauges, written by the metrics workflow's
-- activity and read by every process's /prometheus.
create table metric_snapshots (
    name        text             not null,
    labels      text             not null default '',
    value       double precision not null,
    computed_at timestamptz      not null,
    primary key (name, labels)
);

-- Tables of the example backfills (PRODUCT §7). They double as test and benchmark fixtures.

-- Fault injection: while a row's tag equals a run's faultTag option (or a target's name),
-- planning fails (phase 'plan'), a batch whose range holds key fails ('batch'), or live
-- batches fail ('live'). Deleting the row heals it.
create table example_faults (
    tag   text   not null,
    phase text   not null check (phase in ('plan', 'batch', 'live')),
    key   bigint
);

create index example_faults_tag_idx on example_faults (tag, phase);

-- Independent witness of the cap: how many batches of a run executed at the same moment.
create table example_concurrency (
    run_id   bigint  primary key,
    current  integer not null default 0,
    max_seen integer not null default 0
);

-- One row per batch executing right now, tied to the database session that holds it, so a
-- killed worker's executions drop out of the count when its connections die.
create table example_executing (
    run_id       bigint  not null,
    batch_number integer not null,
    backend_pid  integer not null,
    primary key (run_id, batch_number, backend_pid)
);

create table example_users (
    id    bigserial primary key,
    email text not null
);

create table example_events (
    tenant   text   not null,
    event_id bigint not null,
    body     text   not null,
    primary key (tenant, event_id)
);

create table example_sink_events (
    tenant      text      not null,
    event_id    bigint    not null,
    body        text      not null,
    applied_seq bigserial not null,
    primary key (tenant, event_id)
);

-- Dripline's own records. Runs and batches outlive any Temporal execution's retention.

create table backfill_definitions (
    name                 text primary key,
    description          text        not null,
    options_schema       jsonb       not null,
    default_batch_size   integer     not null check (default_batch_size >= 1),
    max_parallel_batches integer              check (max_parallel_batches >= 1),
    published_at         timestamptz not null default now()
);

create table runs (
    id                             bigserial primary key,
    backfill                       text        not null,
    options                        jsonb       not null,
    -- canonical JSON of options with defaults applied: identical runs have identical keys (R3)
    options_key                    text        not null,
    batch_size                     integer     not null check (batch_size >= 1),
    max_records                    bigint               check (max_records >= 1),
    requested_max_parallel_batches integer              check (requested_max_parallel_batches >= 1),
    max_parallel_batches           integer     not null check (max_parallel_batches >= 1),
    start_at                       timestamptz,
    created_by                     text,
    status                         text        not null
        check (status in ('pending', 'running', 'paused', 'completed', 'failed', 'stopped')),
    error                          text,
    idempotency_key                text unique,
    workflow_id                    text,
    -- planning cursor: the last key cut into a batch, the next batch number, keys planned so far
    plan_cursor                    bigint,
    plan_done                      boolean     not null default false,
    next_batch_number              integer     not null default 1,
    planned_keys                   bigint      not null default 0,
    total_keys                     bigint,
    processed_keys                 bigint      not null default 0,
    created_at                     timestamptz not null default now(),
    updated_at                     timestamptz not null default now(),
    started_at                     timestamptz,
    finished_at                    timestamptz
);

-- At most one active run per identical (backfill, options, maxRecords) (R3).
create unique index runs_one_active
    on runs (backfill, options_key, coalesce(max_records, -1))
    where status in ('pending', 'running', 'paused');

create index runs_status_idx on runs (status, id desc);
create index runs_backfill_idx on runs (backfill, id desc);

create table batches (
    run_id      bigint      not null references runs (id) on delete cascade,
    number      integer     not null check (number >= 1),
    start_key   bigint      not null,
    end_key     bigint      not null,
    size        integer     not null check (size >= 1),
    status      text        not null
        check (status in ('pending', 'enqueued', 'running', 'completed', 'failed', 'stopped')),
    attempts    integer     not null default 0,
    error       text,
    -- the claim that enqueued this batch; a repeated claim with the same token is answered from it
    claim_token bigint,
    started_at  timestamptz,
    finished_at timestamptz,
    primary key (run_id, number)
);

create index batches_run_status_idx on batches (run_id, status, number);

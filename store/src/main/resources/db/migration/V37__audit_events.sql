-- The audit trail (O4; docs/operations.md "Audit"): one row per operator action, written after the
-- action by the app (the API and the dashboard) and, for a signal sent to a run's workflow from the
-- Temporal CLI or Web UI, by that workflow. Nothing references it and it references nothing: the
-- trail of a deleted run or target stays.
create table audit_events (
    id         bigint      generated always as identity primary key,
    at         timestamptz not null default now(),
    -- who: the caller's name (the token's role, e.g. 'operator'), or 'temporal'
    actor      text        not null,
    -- what: e.g. 'run.stop', 'target.delete', 'pool.put'
    action     text        not null,
    run_id     bigint,
    target     text,
    -- what else the action names: a pool, a throttle check, a webhook, a path text naming nothing
    subject    text,
    -- what was asked, e.g. the body of a cap change (never a secret)
    detail     text,
    outcome    text        not null check (outcome in ('accepted', 'rejected', 'ignored')),
    -- the HTTP status answered; none for a signal
    status     integer,
    -- why it was rejected or ignored: the problem's detail, or the workflow's reason
    problem    text,
    -- makes a write retried by a workflow's activity a no-op
    dedup_key  text        unique
);

-- Newest first by id: the primary key serves the unfiltered page, these the filtered ones.
create index audit_events_run_idx on audit_events (run_id, id) where run_id is not null;
create index audit_events_target_idx on audit_events (target, id) where target is not null;

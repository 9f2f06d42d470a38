-- Retention and deletion without large transactions (spec D5; docs/design.md "Retention and
-- deletion"). A run's batches no longer go with its row by cascade, which deleted every batch in
-- the request that deleted the run: the row goes at once, and the batches left behind are purged
-- in bounded chunks by the purge workflow.
alter table batches drop constraint batches_run_id_fkey;

-- Runs deleted whose batches are still to be purged: one row per deleted run, written by the
-- trigger below in the transaction that deletes the run, whoever deletes it. The purge removes
-- the run's batches, then its row here.
create table run_purges (
    run_id     bigint      primary key,
    deleted_at timestamptz not null default now()
);

create function dripline_run_purge_due() returns trigger
language plpgsql as $$
begin
    insert into run_purges (run_id) values (old.id) on conflict (run_id) do nothing;
    return null;
end $$;

create trigger runs_purge_due after delete on runs
    for each row execute function dripline_run_purge_due();

-- When the purge removed the batches of an ended run past the retention; null while it has not.
alter table runs add column batches_purged_at timestamptz;

-- The ended runs whose batches are still kept, oldest end first: what the retention purge looks for.
create index runs_purge_due_idx on runs (finished_at)
    where batches_purged_at is null and status in ('completed', 'failed', 'stopped');

-- Webhook and audit events older than the retention, oldest first, for the purge.
create index webhook_events_created_idx on webhook_events (created_at);
create index audit_events_at_idx on audit_events (at);

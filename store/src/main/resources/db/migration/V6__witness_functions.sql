-- example.sleep's concurrency witness (examples/ConcurrencyWitness) as two server-side functions:
-- one round trip per start or end of a batch, so the run's witness row is locked only while the
-- function runs, not across several client round trips. Each call commits asynchronously
-- (synchronous_commit off for its own transaction only): the witness is a test instrument, and a
-- lost tail after a PostgreSQL crash cannot under-count (dead sessions' rows are dropped anyway),
-- while waiting for the WAL flush with the row locked would pace every batch of the run.

-- Drops the run's rows whose sessions are gone (killed workers), then sets current from the rest
-- and raises max_seen. Call with the run's example_concurrency row locked.
create function example_witness_recount(p_run_id bigint) returns void
language plpgsql as $$
declare
    executing integer;
begin
    delete from example_executing e
     where e.run_id = p_run_id
       and not exists (select 1 from pg_stat_get_activity(e.backend_pid));
    select count(*) into executing from example_executing where run_id = p_run_id;
    update example_concurrency
       set current = executing, max_seen = greatest(max_seen, executing)
     where run_id = p_run_id;
end $$;

-- A batch of the run starts executing, held by the calling session.
create function example_witness_enter(p_run_id bigint, p_batch integer) returns void
language plpgsql as $$
begin
    perform set_config('synchronous_commit', 'off', true);
    insert into example_concurrency (run_id) values (p_run_id) on conflict (run_id) do nothing;
    perform 1 from example_concurrency where run_id = p_run_id for update;
    -- Rows of this very session belong to an earlier holder that failed to clean up; the session
    -- is this batch's now, so none of them is executing.
    delete from example_executing where run_id = p_run_id and backend_pid = pg_backend_pid();
    insert into example_executing (run_id, batch_number, backend_pid)
    values (p_run_id, p_batch, pg_backend_pid());
    perform example_witness_recount(p_run_id);
end $$;

-- The batch held by the calling session ends.
create function example_witness_exit(p_run_id bigint) returns void
language plpgsql as $$
begin
    perform set_config('synchronous_commit', 'off', true);
    insert into example_concurrency (run_id) values (p_run_id) on conflict (run_id) do nothing;
    perform 1 from example_concurrency where run_id = p_run_id for update;
    delete from example_executing where run_id = p_run_id and backend_pid = pg_backend_pid();
    perform example_witness_recount(p_run_id);
end $$;

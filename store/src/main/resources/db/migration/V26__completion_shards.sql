-- The shard of run_key_counts a transaction writes is its completion's p_shard (the completed
-- batch's number modulo 16, ShardedCounters.shardOf) when it completes a batch, and its session's
-- (backend pid modulo 16) otherwise.
--
-- V25 wrote every counter of a run to the writing session's shard. The chains of a run take its
-- lowest pending batches, so the batches completing at once have nearby numbers and mostly
-- different numbers modulo 16, while their sessions' pids collide at random: at a cap of 20, W3's
-- completions waited on each other's counter rows (and so on each other's commits) and ran at
-- 750-870 batches a second against 1,111 with V24's shards. A completion now names its shard for
-- the rest of its transaction (set_config(..., true)), so its keys, its slot's release (the
-- holders' trigger) and a chain's next batch (the same trigger) go to one row, as before: still one
-- counter row per transaction, so the lock order of V25 holds.

create or replace function dripline_session_shard() returns integer
language sql stable parallel safe as $$
    select coalesce(cast(nullif(current_setting('dripline.shard', true), '') as integer),
                    pg_backend_pid() % 16)
$$;

create or replace function dripline_complete_batch(
    p_run_id bigint, p_number integer, p_holder text, p_shard integer)
    returns table (backfill text, slot_seconds float8)
language plpgsql as $$
#variable_conflict use_column
declare
    v_backfill text;
    v_size integer;
    v_seconds float8;
begin
    perform set_config('dripline.shard', cast(p_shard as text), true);
    update batches b
       set status = 'completed', finished_at = now(), error = null, lease_until = null
      from runs r
     where r.id = b.run_id and b.run_id = p_run_id and b.number = p_number
       and b.status = 'running' and b.holder = p_holder
    returning r.backfill, b.size,
              cast(extract(epoch from now() - coalesce(b.enqueued_at, b.started_at)) as float8)
         into v_backfill, v_size, v_seconds;
    if not found then
        perform dripline_slot_lost(p_run_id, p_number);
    end if;
    update run_key_counts
       set processed_keys = processed_keys + v_size, completed_batches = completed_batches + 1
     where run_id = p_run_id and shard = dripline_session_shard();
    if not found then
        insert into run_key_counts (run_id, shard, processed_keys, completed_batches)
        values (p_run_id, dripline_session_shard(), v_size, 1)
        on conflict (run_id, shard) do update
           set processed_keys = run_key_counts.processed_keys + excluded.processed_keys,
               completed_batches = run_key_counts.completed_batches + 1;
    end if;
    insert into batch_outcome_counters (backfill, outcome, shard, value)
    values (v_backfill, 'completed', p_shard, 1)
    on conflict (backfill, outcome, shard) do update
       set value = batch_outcome_counters.value + excluded.value;
    return query select v_backfill, v_seconds;
end $$;


-- The engine's per-batch functions in PL/pgSQL, whose statements' plans a session keeps, instead of
-- SQL, whose body PostgreSQL 15 parses and plans again at every call that it cannot inline (a
-- function returning rows from an UPDATE, or a scalar one that reads a table): in a chained
-- completion, dripline_take_next and the run's check in dripline_next_pending (through
-- dripline_slot_holders and dripline_run_holds) spent more time planning than executing
-- (docs/benchmarks.md, W2). Their bodies and results are those of V18, V21, V24 and V25; only the
-- language changes. Below them, a chained completion that takes a next batch stops writing the
-- run's holders.

create or replace function dripline_take_next(
    p_run_id bigint, p_next integer, p_head integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language plpgsql as $$
#variable_conflict use_column
begin
    return query
        update batches b
           set status = 'running', chain_head = p_head, claim_token = null, holder = p_holder,
               lease_until = now() + p_lease_millis * interval '1 millisecond',
               enqueued_at = now(), started_at = coalesce(b.started_at, now()),
               attempts = b.attempts + 1
          from runs r
         where r.id = b.run_id and b.run_id = p_run_id and b.number = p_next
           and b.status = 'pending'
        returning b.number, coalesce(b.start_key_bytes, dripline_bigint_key(b.start_key)),
                  coalesce(b.end_key_bytes, dripline_bigint_key(b.end_key)), b.size,
                  cast(r.options as text), r.pool;
end $$;

create or replace function dripline_start_batch(
    p_run_id bigint, p_number integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language plpgsql as $$
#variable_conflict use_column
begin
    return query
        update batches b
           set status = 'running', attempts = b.attempts + 1,
               started_at = coalesce(b.started_at, now()), holder = p_holder,
               lease_until = now() + p_lease_millis * interval '1 millisecond'
          from runs r
         where r.id = b.run_id and b.run_id = p_run_id and b.number = p_number
           and (b.status = 'enqueued'
                or (b.status = 'running'
                    and (b.holder = p_holder or coalesce(b.lease_until, '-infinity') < now())))
        returning b.number, coalesce(b.start_key_bytes, dripline_bigint_key(b.start_key)),
                  coalesce(b.end_key_bytes, dripline_bigint_key(b.end_key)), b.size,
                  cast(r.options as text), r.pool;
end $$;

create or replace function dripline_resume_chain(
    p_run_id bigint, p_head integer, p_holder text, p_lease_millis bigint,
    p_new_attempt boolean)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language plpgsql as $$
#variable_conflict use_column
begin
    return query
        update batches b
           set attempts = b.attempts + case when p_new_attempt then 1 else 0 end,
               holder = p_holder,
               lease_until = now() + p_lease_millis * interval '1 millisecond'
          from runs r
         where r.id = b.run_id and b.run_id = p_run_id and b.chain_head = p_head
           and b.status = 'running'
           and (b.holder = p_holder
                or (p_new_attempt and coalesce(b.lease_until, '-infinity') < now()))
        returning b.number, coalesce(b.start_key_bytes, dripline_bigint_key(b.start_key)),
                  coalesce(b.end_key_bytes, dripline_bigint_key(b.end_key)), b.size,
                  cast(r.options as text), r.pool;
end $$;

create or replace function dripline_fail_batch(p_run_id bigint, p_number integer, p_error text)
    returns table (backfill text, slot_seconds float8)
language plpgsql as $$
#variable_conflict use_column
begin
    return query
        update batches b
           set status = 'failed', error = p_error, finished_at = now(), lease_until = null
          from runs r
         where r.id = b.run_id and b.run_id = p_run_id and b.number = p_number
           and b.status in ('enqueued', 'running')
        returning r.backfill,
                  cast(extract(epoch from now() - coalesce(b.enqueued_at, b.started_at)) as float8);
end $$;

create or replace function dripline_attempt_failed(
    p_run_id bigint, p_number integer, p_holder text, p_error text, p_counts boolean)
    returns integer
language plpgsql as $$
declare
    v_failed integer;
begin
    update batches set error = p_error, lease_until = now(), holder = null,
           failed_attempts = failed_attempts + case when p_counts then 1 else 0 end
     where run_id = p_run_id and number = p_number and status = 'running' and holder = p_holder
    returning failed_attempts into v_failed;
    return v_failed;
end $$;

create or replace function dripline_slot_holders(p_run_id bigint) returns integer
language plpgsql stable as $$
declare
    v_holders integer;
begin
    select cast(coalesce(sum(k.holders), 0) as integer) into v_holders
      from run_key_counts k where k.run_id = p_run_id;
    return v_holders;
end $$;

create or replace function dripline_pool_holders(p_pool text) returns integer
language plpgsql stable as $$
declare
    v_holders integer;
begin
    select cast(coalesce(sum(k.holders), 0) as integer) into v_holders
      from runs r join run_key_counts k on k.run_id = r.id
     where r.pool = p_pool and r.status in ('pending', 'running', 'paused');
    return v_holders;
end $$;

create or replace function dripline_run_holds(backfill text) returns text[]
language plpgsql stable as $$
declare
    v_holds text[];
begin
    select coalesce(array_agg(h.reason order by h.reason), '{}') into v_holds
      from (select 'brake' as reason from throttle_brake
            union all
            select c.name from throttle_checks c
             where c.holding and (c.applies_to is null or backfill = any (c.applies_to))) h;
    return v_holds;
end $$;

-- A chained completion's slot passes from the batch it completes to the chain's next batch: the
-- run's holders do not change, so neither is counted (V25 counted -1, then +1, each an UPDATE of
-- the counter row by the holders' trigger). The completion marks its transaction
-- (dripline.holders = 'counted') while it changes the two batches and counts a release itself, in
-- its counter row's one UPDATE, only when it takes no next batch. Every other statement is counted
-- by the trigger, as before.
create or replace function dripline_batch_holding_changed() returns trigger
language plpgsql as $$
declare
    v_run bigint;
    v_delta integer;
begin
    if current_setting('dripline.holders', true) = 'counted' then
        return null;
    end if;
    if tg_op = 'INSERT' then
        v_run := new.run_id;
        v_delta := 1;
    elsif tg_op = 'DELETE' then
        v_run := old.run_id;
        v_delta := -1;
    elsif new.run_id = old.run_id then
        v_run := new.run_id;
        v_delta := case when new.status in ('enqueued', 'running') then 1 else -1 end;
    else
        -- Moved to another run (the engine never does): out of one, into the other.
        if old.status in ('enqueued', 'running') then
            perform dripline_add_holders(old.run_id, -1);
        end if;
        if new.status in ('enqueued', 'running') then
            perform dripline_add_holders(new.run_id, 1);
        end if;
        return null;
    end if;
    update run_key_counts set holders = holders + v_delta
     where run_id = v_run and shard = dripline_session_shard();
    if not found then
        perform dripline_add_holders(v_run, v_delta);
    end if;
    return null;
end $$;

-- V26's completion, adding p_holders to the run's holders in the same UPDATE as its keys.
create function dripline_complete_batch_counted(
    p_run_id bigint, p_number integer, p_holder text, p_shard integer, p_holders integer)
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
       set processed_keys = processed_keys + v_size, completed_batches = completed_batches + 1,
           holders = holders + p_holders
     where run_id = p_run_id and shard = dripline_session_shard();
    if not found then
        insert into run_key_counts (run_id, shard, processed_keys, completed_batches, holders)
        values (p_run_id, dripline_session_shard(), v_size, 1, p_holders)
        on conflict (run_id, shard) do update
           set processed_keys = run_key_counts.processed_keys + excluded.processed_keys,
               completed_batches = run_key_counts.completed_batches + 1,
               holders = run_key_counts.holders + excluded.holders;
    end if;
    insert into batch_outcome_counters (backfill, outcome, shard, value)
    values (v_backfill, 'completed', p_shard, 1)
    on conflict (backfill, outcome, shard) do update
       set value = batch_outcome_counters.value + excluded.value;
    return query select v_backfill, v_seconds;
end $$;

-- The completion counted by the trigger, as V26's.
create or replace function dripline_complete_batch(
    p_run_id bigint, p_number integer, p_holder text, p_shard integer)
    returns table (backfill text, slot_seconds float8)
language plpgsql as $$
begin
    return query select * from dripline_complete_batch_counted(
        p_run_id, p_number, p_holder, p_shard, 0);
end $$;

-- V27's chained completion with the slot passed on uncounted. The next batch is picked (and
-- locked) first, so its take finds it pending; were it not taken, its holder is taken off again.
create or replace function dripline_complete_and_claim_next(
    p_run_id bigint, p_number integer, p_holder text, p_shard integer, p_head integer,
    p_lease_millis bigint, p_lane integer)
    returns table (backfill text, slot_seconds float8, number integer, start_key bytea,
                   end_key bytea, size integer, options text, pool text)
language plpgsql as $$
#variable_conflict use_column
declare
    v_next integer;
    v_done record;
    v_taken record;
begin
    v_next := dripline_next_pending(p_run_id, p_lane, 1);
    perform set_config('dripline.holders', 'counted', true);
    select * into v_done from dripline_complete_batch_counted(
        p_run_id, p_number, p_holder, p_shard, case when v_next is null then -1 else 0 end);
    select * into v_taken
      from dripline_take_next(p_run_id, v_next, p_head, p_holder, p_lease_millis);
    perform set_config('dripline.holders', '', true);
    if v_next is not null and v_taken.number is null then
        perform dripline_add_holders(p_run_id, -1);
    end if;
    perform dripline_advance_pick_cursor(p_run_id, v_taken.number);
    return query
        select v_done.backfill, v_done.slot_seconds, v_taken.number, v_taken.start_key,
               v_taken.end_key, v_taken.size, v_taken.options, v_taken.pool;
end $$;

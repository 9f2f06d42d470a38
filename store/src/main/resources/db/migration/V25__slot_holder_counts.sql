-- A run's slot holders (its batches enqueued or running) are kept as a count, not counted: the
-- count of V20 scanned batches_holding_slot_idx, which under the claims' churn read the entries
-- that died since the last vacuum (100 to 434 per count at a cap of 50), once per claim and per
-- chained completion, and once per run of a pool for the pool's. The count now reads the run's 16
-- shard rows of run_key_counts, whatever the churn or the run's size.
--
-- Who writes it: triggers on batches, so every statement that moves a batch into or out of
-- holding keeps it exact, whichever path it takes (the claims, completions, failures, a chain's
-- release, slot recovery, a stop, a retry's re-queue, a run's deletion, an operator's UPDATE).
--
-- Which row: every write of run_key_counts, a holder's and a completion's counters alike, goes to
-- the writing session's shard (dripline_session_shard: its backend pid modulo 16), so a
-- transaction writes at most one row of run_key_counts, and two sessions at once two different
-- rows (but for pids equal modulo 16). A shard's holders alone mean nothing (a batch claimed by
-- one session and completed by another adds to one shard and takes from the other; a shard may
-- go below 0); their sum over the run's shards is exact.
--
-- Lock order, the same in every function and statement of the engine: a run's row, then its
-- pool's row, then batch rows, then the session's run_key_counts row, then batch_outcome_counters.
-- The holders' trigger is an AFTER ROW trigger: it fires at the end of its statement, once the
-- statement holds every batch row it changes. A transaction that holds a run_key_counts row waits
-- for no batch row (a chain's next batch is taken with SKIP LOCKED) and for no run row (the
-- failure of a batch locks its run's row, then its batches, first: recordBatchFailure).
--
-- The cap (R5b) stays exact: a claim that adds holders (dripline_claim_batches, dripline_claim_next)
-- holds the run row's lock while it reads the count and until it commits, so two such claims never
-- read the same count; its statements read in snapshots taken after it got the lock, so they see
-- every holder an earlier claim added. Holders only added without the run's lock are a chained
-- completion's next batch, which replaces the holder it releases in the same transaction (net
-- zero). A completion that commits meanwhile only lowers the count: a claim that missed it took
-- fewer, never more. The pool's cap likewise: claims that add a holder of a pool lock its row
-- after the run's.
--
-- The counters' rows exist from a run's insert on (dripline_run_created) and go with its delete
-- (dripline_run_deleted), so a completion adds to its row with a plain UPDATE. The upsert of V20
-- inserted the row at a run's first completions and deadlocked now and then ("deadlock detected …
-- while inserting index tuple … run_key_counts"). The rows have no foreign key to runs: its check,
-- which PostgreSQL makes on an UPDATE of a row version its own transaction wrote (a completion
-- writes its row twice: its holder, its keys), locks the run's row (FOR KEY SHARE) after the
-- counter row, against the order above, while a claim holds the run's row and waits for the
-- counter row: a deadlock (hundreds in one W1).

alter table run_key_counts drop constraint run_key_counts_run_id_fkey;
alter table run_key_counts add column holders integer not null default 0;
-- Room in each page for the rows' next versions, so that their updates stay HOT (no new index
-- entry that the count's index scan would read) between two prunings of the page.
alter table run_key_counts set (fillfactor = 50);

-- The shard a session writes (ShardedCounters.SHARDS shards).
create function dripline_session_shard() returns integer
language sql stable parallel safe as $$
    select pg_backend_pid() % 16
$$;

-- Every run gets its 16 counter rows at its insert, in the inserting transaction.
create function dripline_run_created() returns trigger
language plpgsql as $$
begin
    insert into run_key_counts (run_id, shard)
    select new.id, s from generate_series(0, 15) s
    on conflict (run_id, shard) do nothing;
    return null;
end $$;

create trigger runs_counter_rows after insert on runs
    for each row execute function dripline_run_created();

-- A run's counter rows go with it (the foreign key's cascade did, before).
create function dripline_run_deleted() returns trigger
language plpgsql as $$
begin
    delete from run_key_counts where run_id = old.id;
    return null;
end $$;

create trigger runs_counter_rows_deleted after delete on runs
    for each row execute function dripline_run_deleted();

-- Adds p_delta to run p_run_id's holders in the session's shard; a row someone deleted is made
-- again, unless its run is gone (being deleted, with its batches).
create function dripline_add_holders(p_run_id bigint, p_delta integer) returns void
language plpgsql as $$
begin
    update run_key_counts set holders = holders + p_delta
     where run_id = p_run_id and shard = dripline_session_shard();
    if not found and exists (select 1 from runs where id = p_run_id) then
        insert into run_key_counts (run_id, shard, holders)
        values (p_run_id, dripline_session_shard(), p_delta)
        on conflict (run_id, shard) do update
           set holders = run_key_counts.holders + excluded.holders;
    end if;
end $$;

create function dripline_batch_holding_changed() returns trigger
language plpgsql as $$
declare
    v_run bigint;
    v_delta integer;
begin
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

-- Fired only when a batch starts or stops holding a slot (planning inserts pending batches, and
-- most updates keep the status, or keep it holding: enqueued -> running).
create trigger batches_holding_inserted after insert on batches
    for each row when (new.status in ('enqueued', 'running'))
    execute function dripline_batch_holding_changed();
create trigger batches_holding_changed after update of status on batches
    for each row
    when ((old.status in ('enqueued', 'running')) <> (new.status in ('enqueued', 'running'))
          or old.run_id <> new.run_id)
    execute function dripline_batch_holding_changed();
create trigger batches_holding_deleted after delete on batches
    for each row when (old.status in ('enqueued', 'running'))
    execute function dripline_batch_holding_changed();

-- Existing runs: their rows, and their holders counted once, here, while EngineLockOrder holds
-- runs and batches (no batch changes status until this commits).
insert into run_key_counts (run_id, shard)
select r.id, s.s from runs r cross join generate_series(0, 15) s (s)
on conflict (run_id, shard) do nothing;

update run_key_counts k set holders = h.n
  from (select run_id, cast(count(*) as integer) as n from batches
         where status in ('enqueued', 'running') group by run_id) h
 where k.run_id = h.run_id and k.shard = 0;

-- The partial index the count of V20 scanned goes: the planner took it, as the smallest, for the
-- statements that look up one batch that holds a slot (dripline_start_batch, dripline_resume_chain,
-- a live holder's check), which then read every entry of the run, dead ones included (W1: 195 per
-- scan); they use the primary key, or batches_run_status_idx, instead. Slot holders per backfill
-- (the metrics) are summed from the counters.
drop index batches_holding_slot_idx;

-- Slot holders of a run: the sum of its shards' holders (16 rows by the primary key).
create or replace function dripline_slot_holders(p_run_id bigint) returns integer
language sql stable
as $$
    select cast(coalesce(sum(holders), 0) as integer) from run_key_counts where run_id = p_run_id
$$;

-- Batches holding a slot of pool p_pool: the holders of its active runs.
create or replace function dripline_pool_holders(p_pool text) returns integer
language sql stable as $$
    select cast(coalesce(sum(k.holders), 0) as integer)
      from runs r join run_key_counts k on k.run_id = r.id
     where r.pool = p_pool and r.status in ('pending', 'running', 'paused')
$$;

-- A batch's completion (V20) with its run's counters added in the session's shard by a plain
-- UPDATE (the row exists from the run's insert; an INSERT is left for a row that someone deleted).
-- Lock order: the batch's row, the run_key_counts row, the batch_outcome_counters row (shard
-- p_shard). Its slot's release is counted by the holders' trigger, in the same row.
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

-- A chain's next batch (V21's dripline_chain_next) in two steps, so that a chained completion picks
-- its next batch before it writes anything. The pick (FOR UPDATE SKIP LOCKED) skips a row another
-- transaction holds, but it waits, whatever SKIP LOCKED says, for the transaction that holds the
-- newest version of a row its snapshot still saw pending ("while locking updated version of
-- tuple"): a chain that completed that row's batch an instant ago and now waits for a counter row.
-- Picked first, by a transaction that holds no row yet, that wait closes no cycle (W1: 13 of 18
-- deadlocks with the pick after the completion; the other 5 were counters the picker held).

-- The run's lowest pending batch, locked, if the run may start one in lane p_lane: it is running,
-- not stopping, its failure budget unspent, its recorded cap covers the lane, nothing holds it
-- (dripline_run_holds), and its slot holders less p_releasing (a holder the caller releases in the
-- same transaction) leave a slot free, in its pool too, where no waiter of another run counts.
-- Null if none.
create function dripline_next_pending(p_run_id bigint, p_lane integer, p_releasing integer)
    returns integer
language plpgsql as $$
declare
    v_pool text;
    v_next integer;
begin
    select r.pool into v_pool from runs r
     where r.id = p_run_id and r.status = 'running' and r.stop_requested_at is null
       and r.failure_budget_spent_at is null
       and p_lane <= r.max_parallel_batches
       and cardinality(dripline_run_holds(r.backfill)) = 0
       and dripline_slot_holders(r.id) - p_releasing < r.max_parallel_batches;
    if not found then
        return null;
    end if;
    if v_pool is not null and (
           not exists (select 1 from pools p
                        where p.name = v_pool
                          and dripline_pool_holders(v_pool) - p_releasing < p.size)
           or exists (select 1 from dripline_pool_waiters(v_pool) w
                       where w.run_id <> p_run_id)) then
        return null;
    end if;
    select b.number into v_next from batches b
     where b.run_id = p_run_id and b.status = 'pending'
     order by b.number limit 1
       for update skip locked;
    return v_next;
end $$;

-- Batch p_next (picked by dripline_next_pending) taken into the chain headed by p_head: pending ->
-- running, an attempt counted, p_holder's lease. Row: the batch, or none.
create function dripline_take_next(
    p_run_id bigint, p_next integer, p_head integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language sql as $$
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
              cast(r.options as text), r.pool
$$;

-- A chain that holds no batch (dripline_claim_next, under the run's and pool's row locks).
create or replace function dripline_chain_next(
    p_run_id bigint, p_head integer, p_lane integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language sql as $$
    select * from dripline_take_next(
        p_run_id, dripline_next_pending(p_run_id, p_lane, 0), p_head, p_holder, p_lease_millis)
$$;

-- A chained batch's completion and the claim of the chain's next batch, one transaction: the next
-- batch is picked first (counting the batch being completed as released), then the batch is
-- completed (dripline_complete_batch; it raises DL001 and the transaction rolls back when the batch
-- was not the holder's any more), then the next batch taken. Lock order: the next batch's row
-- (SKIP LOCKED), the completed batch's row, the counter rows. Same row as before.
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
begin
    v_next := dripline_next_pending(p_run_id, p_lane, 1);
    select * into v_done from dripline_complete_batch(p_run_id, p_number, p_holder, p_shard);
    return query
        select v_done.backfill, v_done.slot_seconds, n.number, n.start_key, n.end_key, n.size,
               n.options, n.pool
          from (values (0)) one
          left join dripline_take_next(p_run_id, v_next, p_head, p_holder, p_lease_millis) n
            on true;
end $$;

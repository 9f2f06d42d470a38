-- A run's pick cursor: the pick of a run's lowest pending batches starts at a number below which
-- none of its batches is pending, so that it reads a bounded number of index entries whatever the
-- run's size and however many batches are stored.
--
-- Before, the pick (dripline_next_pending, dripline_claim_batches) scanned batches_run_status_idx
-- from the run's first (run_id, 'pending', number) entry: every batch that left pending since the
-- last vacuum of batches had left a dead entry there, which each pick read again (W1: 53 entries
-- per pick; more the longer a run goes between vacuums). It now starts at the run's
-- run_pick_cursors.pending_from, so it reads the entries from there to the first batch it can take.
--
-- The invariant, true in every committed state: no batch of the run numbered below pending_from is
-- pending.
-- * Lowered (a batch becomes pending: planning's insert, a retry's re-queue, a released chain, a
--   recovered slot, an operator's UPDATE): by triggers on batches, in the transaction that makes it
--   pending, so both commit together, whichever statement does it.
-- * Advanced lazily, not by every pick: only when the batch a claim took is 16 or more past the
--   cursor (dripline_advance_pick_cursor), to the lowest batch still pending then, so a pick reads
--   at most about 16 entries of batches taken since the cursor moved, plus those other chains are
--   taking at that moment. One pick in about 16 writes the cursor row.
--
-- Who waits for whom. Every writer of a run's cursor row (but the run's insert and delete) holds
-- the run's pick-cursor advisory lock (dripline_pick_cursor_lock) until it commits; no pick locks
-- the row, it reads it. An advance only tries the lock and gives up if another holds it, so it
-- never waits for it, and comes last in its transaction (after the batch and counter rows), so it
-- holds the lock only while it commits. A lowering waits for the lock, after its batch rows and its
-- counter row (its AFTER ROW trigger is named after batches_holding_*, which PostgreSQL fires
-- first): the lock order of V25, with the pick cursor after the counter rows. Two lowerings of one
-- run at once are a recovery or a chain's release beside another one (a failure's record and a
-- retry's re-queue lock the run's row first). The lock also makes the advance safe: a lowering
-- that has not taken it yet (its batch pending but not committed, so not seen by the advance) lowers
-- the cursor after the advance commits; one that has taken it makes the advance give up.
--
-- A claim's repeat is looked up by its token (batches_claim_token_idx), not through every entry of
-- the run's batches that were ever enqueued or running since the last vacuum.

create table run_pick_cursors (
    run_id       bigint  primary key,
    pending_from integer not null default 1
);
-- Room in each page for the row's next versions, so that its updates stay HOT.
alter table run_pick_cursors set (fillfactor = 50);

-- Existing runs (EngineLockOrder holds runs and batches: no batch changes status meanwhile): from
-- their lowest pending batch, else past their last batch.
insert into run_pick_cursors (run_id, pending_from)
select r.id, coalesce(p.lowest, l.last + 1, 1)
  from runs r
  left join (select run_id, min(number) as lowest from batches where status = 'pending'
              group by run_id) p on p.run_id = r.id
  left join (select run_id, max(number) as last from batches group by run_id) l
         on l.run_id = r.id;

-- Every run gets its cursor row at its insert; it goes with the run (no foreign key: its check
-- would lock the run's row after the cursor's, against the lock order).
create function dripline_run_pick_cursor_created() returns trigger
language plpgsql as $$
begin
    insert into run_pick_cursors (run_id) values (new.id) on conflict (run_id) do nothing;
    return null;
end $$;

create trigger runs_pick_cursor after insert on runs
    for each row execute function dripline_run_pick_cursor_created();

create function dripline_run_pick_cursor_deleted() returns trigger
language plpgsql as $$
begin
    delete from run_pick_cursors where run_id = old.id;
    return null;
end $$;

create trigger runs_pick_cursor_deleted after delete on runs
    for each row execute function dripline_run_pick_cursor_deleted();

-- The advisory lock of run p_run_id's cursor row, taken until the transaction ends: waited for
-- (p_wait) or only tried. True if held.
create function dripline_pick_cursor_lock(p_run_id bigint, p_wait boolean) returns boolean
language plpgsql as $$
begin
    if p_wait then
        perform pg_advisory_xact_lock(hashtext('dripline.pick_cursor'),
                                      cast(p_run_id % 2147483647 as integer));
        return true;
    end if;
    return pg_try_advisory_xact_lock(hashtext('dripline.pick_cursor'),
                                     cast(p_run_id % 2147483647 as integer));
end $$;

-- Batch p_number of run p_run_id is pending (or about to be, in this transaction): the run's
-- cursor is at most p_number.
create function dripline_pick_cursor_lower(p_run_id bigint, p_number integer) returns void
language plpgsql as $$
begin
    perform dripline_pick_cursor_lock(p_run_id, true);
    update run_pick_cursors set pending_from = p_number
     where run_id = p_run_id and pending_from > p_number;
end $$;

create function dripline_batch_became_pending() returns trigger
language plpgsql as $$
begin
    perform dripline_pick_cursor_lower(new.run_id, new.number);
    return null;
end $$;

-- Named after batches_holding_changed, so that PostgreSQL fires it after that trigger, for each
-- row: the counter row before the cursor.
create trigger batches_pick_cursor_lowered after update of status, number, run_id on batches
    for each row
    when (new.status = 'pending'
          and (old.status <> 'pending' or old.number <> new.number or old.run_id <> new.run_id))
    execute function dripline_batch_became_pending();

-- Planning inserts a page of pending batches in one statement: the cursor is lowered once per run
-- of the statement (planning appends numbers past the run's last, so it mostly finds the cursor
-- below them and writes nothing; it waits for an advance to commit at most).
create function dripline_batches_inserted_pending() returns trigger
language plpgsql as $$
declare
    v record;
begin
    for v in select i.run_id, min(i.number) as lowest from inserted i
              where i.status = 'pending' group by i.run_id order by i.run_id loop
        perform dripline_pick_cursor_lower(v.run_id, v.lowest);
    end loop;
    return null;
end $$;

create trigger batches_pick_cursor_inserted after insert on batches
    referencing new table as inserted
    for each statement execute function dripline_batches_inserted_pending();

-- Moves run p_run_id's cursor up to its lowest pending batch, if batch p_taken, which this
-- transaction took, is 16 or more past it and no other transaction holds the cursor's lock (then
-- it is left as it is: the next claim 16 past it tries again). Called last in the transaction that
-- took p_taken: the cursor moves only if that take commits. Never waits.
create function dripline_advance_pick_cursor(p_run_id bigint, p_taken integer) returns void
language plpgsql as $$
declare
    v_from integer;
    v_lowest integer;
begin
    if p_taken is null then
        return;
    end if;
    select c.pending_from into v_from from run_pick_cursors c where c.run_id = p_run_id;
    if found and p_taken - v_from < 16 then
        return;
    end if;
    if not dripline_pick_cursor_lock(p_run_id, false) then
        return;
    end if;
    -- Read again under the lock: a lowering that committed since is seen.
    select c.pending_from into v_from from run_pick_cursors c where c.run_id = p_run_id;
    -- Batches locked by other claims are still pending here (they may roll back); this
    -- transaction's own are not.
    select b.number into v_lowest from batches b
     where b.run_id = p_run_id and b.status = 'pending' and b.number >= coalesce(v_from, 1)
     order by b.number limit 1;
    insert into run_pick_cursors as c (run_id, pending_from)
    values (p_run_id, coalesce(v_lowest, p_taken + 1))
    on conflict (run_id) do update set pending_from = excluded.pending_from
     where c.pending_from < excluded.pending_from;
end $$;

-- The pick of V25 from the run's cursor: the run's lowest pending batch, locked, if the run may
-- start one in lane p_lane (conditions as in V25). Null if none. The cursor is read in the same
-- statement, so in the same snapshot, as the batches.
create or replace function dripline_next_pending(p_run_id bigint, p_lane integer,
                                                 p_releasing integer)
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
       and b.number >= coalesce((select c.pending_from from run_pick_cursors c
                                  where c.run_id = p_run_id), 1)
     order by b.number limit 1
       for update of b skip locked;
    return v_next;
end $$;

-- A chain that holds no batch (dripline_claim_next, under the run's and pool's row locks): V25's,
-- with the cursor moved on last.
create or replace function dripline_chain_next(
    p_run_id bigint, p_head integer, p_lane integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language plpgsql as $$
#variable_conflict use_column
declare
    v_next record;
begin
    select * into v_next from dripline_take_next(
        p_run_id, dripline_next_pending(p_run_id, p_lane, 0), p_head, p_holder, p_lease_millis);
    if v_next.number is null then
        return;
    end if;
    perform dripline_advance_pick_cursor(p_run_id, v_next.number);
    return query select v_next.number, v_next.start_key, v_next.end_key, v_next.size,
                        v_next.options, v_next.pool;
end $$;

-- V25's chained completion, with the cursor moved on last, after the counter rows.
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
    select * into v_done from dripline_complete_batch(p_run_id, p_number, p_holder, p_shard);
    select * into v_taken
      from dripline_take_next(p_run_id, v_next, p_head, p_holder, p_lease_millis);
    perform dripline_advance_pick_cursor(p_run_id, v_taken.number);
    return query
        select v_done.backfill, v_done.slot_seconds, v_taken.number, v_taken.start_key,
               v_taken.end_key, v_taken.size, v_taken.options, v_taken.pool;
end $$;

-- V21's waiters of a pool, whose pending batch is looked for from the run's cursor.
create or replace function dripline_pool_waiters(p_pool text)
    returns table (run_id bigint, since timestamptz)
language sql stable as $$
    select w.run_id, w.since
      from pool_waiters w join runs r on r.id = w.run_id
     where w.pool = p_pool and r.pool = p_pool and r.status = 'running'
       and r.stop_requested_at is null
       and w.seen_at > now() - interval '15 seconds'
       and cardinality(dripline_run_holds(r.backfill)) = 0
       and r.failure_budget_spent_at is null
       and exists (select 1 from batches b
                    where b.run_id = r.id and b.status = 'pending'
                      and b.number >= coalesce((select c.pending_from from run_pick_cursors c
                                                 where c.run_id = r.id), 1))
$$;

-- A claim's repeat (the same token: its activity ran again after its answer was lost) is answered
-- from the batches the token took, found by this index: the few entries of that token. Through
-- batches_run_status_idx the look read, on every claim, the entries that every batch of the run
-- enqueued or running since the last vacuum left there. Chains take their batches with no token, so
-- theirs have no entry.
create index batches_claim_token_idx on batches (run_id, claim_token) where claim_token is not null;

-- V21's claim, whose pick (and its look for a pending batch) starts at the run's cursor, and
-- which moves the cursor on last.
create or replace function dripline_claim_batches(
    p_run_id bigint, p_token bigint, p_limit integer, p_safety_cap integer)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   slots_full boolean, holds text, held_since timestamptz,
                   throttled_millis bigint)
language plpgsql as $$
#variable_conflict use_column
declare
    v_cap integer;
    v_pool text;
    v_holds text[];
    v_held_since timestamptz;
    v_throttled bigint;
    v_room integer;
    v_limit integer;
    v_pool_limited boolean := false;
    v_size integer;
    v_free integer;
    v_since timestamptz;
    v_ahead integer;
    v_others integer;
    v_picked integer[];
    v_budget_spent boolean;
    v_from integer;
begin
    select least(r.max_parallel_batches, d.max_parallel_batches, p_safety_cap), r.pool,
           dripline_run_holds(r.backfill), r.held_since, r.throttled_millis,
           r.failure_budget_spent_at is not null
      into v_cap, v_pool, v_holds, v_held_since, v_throttled, v_budget_spent
      from runs r left join backfill_definitions d on d.name = r.backfill
     where r.id = p_run_id
       for update of r;
    if not found then
        return;
    end if;

    return query
        select b.number, coalesce(b.start_key_bytes, dripline_bigint_key(b.start_key)),
               coalesce(b.end_key_bytes, dripline_bigint_key(b.end_key)), b.size,
               false, '', v_held_since, v_throttled
          from batches b
         where b.run_id = p_run_id and b.claim_token = p_token
           and b.status in ('enqueued', 'running')
         order by b.number;
    if found then
        return;
    end if;

    -- A spent failure budget (P6b, V19.1): the run's workflow pauses it. Not held time.
    if v_budget_spent then
        if v_pool is not null then
            delete from pool_waiters where run_id = p_run_id;
        end if;
        return query select null::integer, null::bytea, null::bytea, null::integer, false,
                            'failure-budget', v_held_since, v_throttled;
        return;
    end if;

    if cardinality(v_holds) > 0 then
        if v_held_since is null then
            update runs set held_since = now() where id = p_run_id
            returning runs.held_since into v_held_since;
        end if;
        return query select null::integer, null::bytea, null::bytea, null::integer, false,
                            array_to_string(v_holds, ','), v_held_since, v_throttled;
        return;
    end if;
    if v_held_since is not null then
        update runs
           set throttled_millis = runs.throttled_millis
                   + greatest(0, cast(extract(epoch from now() - runs.held_since) * 1000 as bigint)),
               held_since = null
         where id = p_run_id
        returning runs.throttled_millis into v_throttled;
    end if;

    v_room := v_cap - dripline_slot_holders(p_run_id);
    v_limit := least(p_limit, v_room);
    if v_limit < 1 then
        if v_pool is not null then
            delete from pool_waiters where run_id = p_run_id;
        end if;
        return query select null::integer, null::bytea, null::bytea, null::integer,
                            v_room < p_limit, '', null::timestamptz, v_throttled;
        return;
    end if;

    if v_pool is not null then
        select p.size into v_size from pools p where p.name = v_pool for update;
        if not found then
            return query select null::integer, null::bytea, null::bytea, null::integer, false,
                                'pool:' || v_pool, null::timestamptz, v_throttled;
            return;
        end if;
        v_free := v_size - dripline_pool_holders(v_pool);
        select w.since into v_since from pool_waiters w
         where w.run_id = p_run_id and w.pool = v_pool
           and w.seen_at > now() - interval '15 seconds';
        select count(*) filter (where w.since < coalesce(v_since, now())), count(*)
          into v_ahead, v_others
          from dripline_pool_waiters(v_pool) w
         where w.run_id <> p_run_id;
        if v_free < 1 or v_ahead > 0 then
            if not exists (select 1 from batches b
                            where b.run_id = p_run_id and b.status = 'pending'
                              and b.number >= coalesce(
                                  (select c.pending_from from run_pick_cursors c
                                    where c.run_id = p_run_id), 1)) then
                delete from pool_waiters where run_id = p_run_id;
                return query select null::integer, null::bytea, null::bytea, null::integer,
                                    false, '', null::timestamptz, v_throttled;
                return;
            end if;
            perform dripline_pool_wait(p_run_id, v_pool, false);
            return query select null::integer, null::bytea, null::bytea, null::integer, false,
                                'pool:' || v_pool, null::timestamptz, v_throttled;
            return;
        end if;
        if least(v_free, greatest(1, v_free - v_others)) < v_limit then
            v_limit := least(v_free, greatest(1, v_free - v_others));
            v_pool_limited := true;
        end if;
    end if;

    select array_agg(p.number) into v_picked
      from (select b.number from batches b
             where b.run_id = p_run_id and b.status = 'pending'
               and b.number >= coalesce((select c.pending_from from run_pick_cursors c
                                          where c.run_id = p_run_id), 1)
             order by b.number limit v_limit
               for update of b skip locked) p;

    if v_pool is not null then
        if v_pool_limited and v_picked is not null then
            perform dripline_pool_wait(p_run_id, v_pool, true);
        else
            delete from pool_waiters where run_id = p_run_id;
        end if;
    end if;

    return query
        with enqueued as (
            update batches b
               set status = 'enqueued', claim_token = p_token, chain_head = null,
                   holder = null, lease_until = null, enqueued_at = now()
             where b.run_id = p_run_id and b.number = any (v_picked) and b.status = 'pending'
            returning b.number, b.start_key_bytes, b.start_key, b.end_key_bytes, b.end_key,
                      b.size)
        select e.number, coalesce(e.start_key_bytes, dripline_bigint_key(e.start_key)),
               coalesce(e.end_key_bytes, dripline_bigint_key(e.end_key)), e.size,
               (v_room < p_limit or v_pool_limited)
                   and (select count(*) from enqueued) = v_limit, '',
               null::timestamptz, v_throttled
          from enqueued e
         order by e.number;
    if not found then
        return query select null::integer, null::bytea, null::bytea, null::integer, false, '',
                            null::timestamptz, v_throttled;
    end if;
    -- Last: the cursor's lock is then held only while the claim commits.
    if v_picked is not null then
        select max(n) into v_from from unnest(v_picked) n;
        perform dripline_advance_pick_cursor(p_run_id, v_from);
    end if;
end $$;

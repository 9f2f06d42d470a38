-- Pools (P5; docs/operations.md "Pools", docs/design.md "Pools"). A named pool caps the batches in
-- flight of every run that draws from it, across runs and workers. A pool slot is not recorded
-- apart: a batch of a run with a pool that holds a slot of its run (enqueued or running) holds a
-- slot of the pool too, so whatever frees the run's slot (its outcome, a lease that ran out and
-- was recovered) frees the pool's.

-- Written by the API (PUT /api/pools/{name}); read by the claims.
create table pools (
    name       text        primary key,
    size       integer     not null check (size >= 1),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
);

-- The pool a run draws from: the run's own, else its definition's, as recorded at its creation.
alter table runs add column pool text;
-- The pool a definition names (Backfill.pool()), as its worker publishes it.
alter table backfill_definitions add column pool text;

-- The runs that may hold slots of a pool: its active ones (an ended run holds none).
create index runs_pool_active_idx on runs (pool)
    where pool is not null and status in ('pending', 'running', 'paused');

-- Runs waiting for a slot of their pool: since when (the line's order), and when their claim last
-- asked (seen_at). Written only by the run's own claims, under its row's lock.
create table pool_waiters (
    run_id  bigint      primary key references runs (id) on delete cascade,
    pool    text        not null,
    since   timestamptz not null,
    seen_at timestamptz not null
);
create index pool_waiters_pool_idx on pool_waiters (pool, since);

-- Batches holding a slot of pool p_pool: those of its active runs that hold a slot of their run.
create function dripline_pool_holders(p_pool text) returns integer
language sql stable as $$
    select cast(coalesce(sum(dripline_slot_holders(r.id)), 0) as integer) from runs r
     where r.pool = p_pool and r.status in ('pending', 'running', 'paused')
$$;

-- The waiters of pool p_pool that count: runs still running, not stopping, held by nothing
-- (dripline_run_holds, a spent failure budget), with a pending batch, whose claim asked within the last 15 seconds (a
-- waiting run asks every quarter second; one whose workflow is gone, or busy elsewhere, drops
-- out). A paused, stopped, deleted or held run never keeps a slot from the others.
create function dripline_pool_waiters(p_pool text)
    returns table (run_id bigint, since timestamptz)
language sql stable as $$
    select w.run_id, w.since
      from pool_waiters w join runs r on r.id = w.run_id
     where w.pool = p_pool and r.pool = p_pool and r.status = 'running'
       and r.stop_requested_at is null
       and w.seen_at > now() - interval '15 seconds'
       and cardinality(dripline_run_holds(r.backfill)) = 0
       and r.failure_budget_spent_at is null
       and exists (select 1 from batches b where b.run_id = r.id and b.status = 'pending')
$$;

-- Records run p_run_id waiting for a slot of p_pool: in line since now, unless it was in line
-- already (and asked lately); p_again puts it at the end of the line (it was just served).
create function dripline_pool_wait(p_run_id bigint, p_pool text, p_again boolean) returns void
language sql as $$
    insert into pool_waiters as w (run_id, pool, since, seen_at)
    values (p_run_id, p_pool, now(), now())
    on conflict (run_id) do update
       set pool = excluded.pool, seen_at = now(),
           since = case when p_again or w.pool <> excluded.pool
                             or w.seen_at <= now() - interval '15 seconds'
                        then now() else w.since end
$$;

-- The workflow's claim (V20) with the run's pool: a batch needs a slot of its run's cap and of its
-- pool. The pool's row is locked after the run's (every claim that adds a holder takes them in
-- that order), then:
-- * no free slot, or a waiter of another run that counts (dripline_pool_waiters) in line ahead of
--   this run: the claim takes nothing, the run waits in line (dripline_pool_wait) and the claim
--   answers the hold 'pool:<name>' (not booked as held time: the run is not throttled, it waits
--   its turn); a pool that does not exist holds the run the same way until it is created;
-- * else it takes at most the free slots less one for each waiter behind it (at least one), so
--   the next in line is served too; a run that got fewer than it asked goes to the end of the
--   line, one that got what it asked leaves it.
-- So a freed slot goes to the run that has waited longest, and each run served waits again behind
-- the others: no run starves. Rows and columns as in V20.
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
                            where b.run_id = p_run_id and b.status = 'pending') then
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
             order by b.number limit v_limit
               for update skip locked) p;

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
end $$;

-- The chain's functions (V20) answer the run's pool with the batch, and a chain of a run with a
-- pool takes its next batch only while the pool has a slot for it (its own, just released, or
-- one free) and no waiter of another run counts: a batch of another run that waits has waited
-- longer than the chain's next, which would start without waiting, so the chain ends and its
-- slot goes to the line.
drop function dripline_complete_and_claim_next(bigint, integer, text, integer, integer, bigint,
                                               integer);
drop function dripline_claim_next(bigint, integer, integer, text, bigint);
drop function dripline_chain_next(bigint, integer, integer, text, bigint);

create function dripline_chain_next(
    p_run_id bigint, p_head integer, p_lane integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language plpgsql as $$
#variable_conflict use_column
declare
    v_pool text;
    v_next integer;
begin
    select r.pool into v_pool from runs r
     where r.id = p_run_id and r.status = 'running' and r.stop_requested_at is null
       and r.failure_budget_spent_at is null
       and p_lane <= r.max_parallel_batches
       and cardinality(dripline_run_holds(r.backfill)) = 0
       and dripline_slot_holders(r.id) < r.max_parallel_batches;
    if not found then
        return;
    end if;
    if v_pool is not null and (
           not exists (select 1 from pools p
                        where p.name = v_pool and dripline_pool_holders(v_pool) < p.size)
           or exists (select 1 from dripline_pool_waiters(v_pool) w
                       where w.run_id <> p_run_id)) then
        return;
    end if;
    select b.number into v_next from batches b
     where b.run_id = p_run_id and b.status = 'pending'
     order by b.number limit 1
       for update skip locked;
    if v_next is null then
        return;
    end if;
    return query
        update batches b
           set status = 'running', chain_head = p_head, claim_token = null, holder = p_holder,
               lease_until = now() + p_lease_millis * interval '1 millisecond',
               enqueued_at = now(), started_at = coalesce(b.started_at, now()),
               attempts = b.attempts + 1
          from runs r
         where r.id = b.run_id and b.run_id = p_run_id and b.number = v_next
           and b.status = 'pending'
        returning b.number, coalesce(b.start_key_bytes, dripline_bigint_key(b.start_key)),
                  coalesce(b.end_key_bytes, dripline_bigint_key(b.end_key)), b.size,
                  cast(r.options as text), r.pool;
end $$;

-- A chain that holds no batch claims its next one: dripline_chain_next under the run row's lock
-- and then, for a run with a pool, the pool row's (it adds a holder of both).
create function dripline_claim_next(
    p_run_id bigint, p_head integer, p_lane integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language plpgsql as $$
declare
    v_pool text;
begin
    select r.pool into v_pool from runs r where r.id = p_run_id for update;
    if not found then
        return;
    end if;
    if v_pool is not null then
        perform 1 from pools p where p.name = v_pool for update;
    end if;
    return query select * from dripline_chain_next(
        p_run_id, p_head, p_lane, p_holder, p_lease_millis);
end $$;

create function dripline_complete_and_claim_next(
    p_run_id bigint, p_number integer, p_holder text, p_shard integer, p_head integer,
    p_lease_millis bigint, p_lane integer)
    returns table (backfill text, slot_seconds float8, number integer, start_key bytea,
                   end_key bytea, size integer, options text, pool text)
language plpgsql as $$
#variable_conflict use_column
declare
    v_done record;
begin
    select * into v_done from dripline_complete_batch(p_run_id, p_number, p_holder, p_shard);
    return query
        select v_done.backfill, v_done.slot_seconds, n.number, n.start_key, n.end_key, n.size,
               n.options, n.pool
          from (values (0)) one
          left join dripline_chain_next(p_run_id, p_head, p_lane, p_holder, p_lease_millis) n
            on true;
end $$;

-- example.sleep's witness per pool (spec P5), as example_concurrency is per run (V2, V6): one row
-- per executing batch of a run with a pool, tied to the session that holds it, so a killed
-- worker's executions drop out of the count.
create table example_pool_concurrency (
    pool     text    primary key,
    current  integer not null default 0,
    max_seen integer not null default 0
);

create table example_pool_executing (
    pool        text    not null,
    run_id      bigint  not null,
    backend_pid integer not null,
    primary key (pool, backend_pid)
);

-- Drops the pool's rows whose sessions are gone, then sets current from the rest and raises
-- max_seen. Call with the pool's example_pool_concurrency row locked.
create function example_pool_witness_recount(p_pool text) returns void
language plpgsql as $$
declare
    executing integer;
begin
    delete from example_pool_executing e
     where e.pool = p_pool
       and not exists (select 1 from pg_stat_get_activity(e.backend_pid));
    select count(*) into executing from example_pool_executing where pool = p_pool;
    update example_pool_concurrency
       set current = executing, max_seen = greatest(max_seen, executing)
     where pool = p_pool;
end $$;

-- A batch of a run of pool p_pool starts executing, held by the calling session.
create function example_pool_witness_enter(p_pool text, p_run_id bigint) returns void
language plpgsql as $$
begin
    perform set_config('synchronous_commit', 'off', true);
    insert into example_pool_concurrency (pool) values (p_pool) on conflict (pool) do nothing;
    perform 1 from example_pool_concurrency where pool = p_pool for update;
    delete from example_pool_executing where pool = p_pool and backend_pid = pg_backend_pid();
    insert into example_pool_executing (pool, run_id, backend_pid)
    values (p_pool, p_run_id, pg_backend_pid());
    perform example_pool_witness_recount(p_pool);
end $$;

-- The batch held by the calling session ends.
create function example_pool_witness_exit(p_pool text) returns void
language plpgsql as $$
begin
    perform set_config('synchronous_commit', 'off', true);
    insert into example_pool_concurrency (pool) values (p_pool) on conflict (pool) do nothing;
    perform 1 from example_pool_concurrency where pool = p_pool for update;
    delete from example_pool_executing where pool = p_pool and backend_pid = pg_backend_pid();
    perform example_pool_witness_recount(p_pool);
end $$;

-- The rest of a batch's hot path, as functions too, so no statement of BatchStore hides its verbs
-- from Micronaut Data: an attempt's start at its batch, the resumption of a chain's batch, a
-- batch's failure and the release of a failed activity's chain. Each returns what it changed.

-- An attempt marks batch p_number running under p_holder, an attempt counted, with a lease of
-- p_lease_millis. Guard: the batch holds a slot — enqueued, or running under this same holder or
-- a holder whose lease has run out — so a batch held by a live attempt is never taken from it
-- (R5b), and one that lost its slot is not run. Row: the batch, or none.
create function dripline_start_batch(
    p_run_id bigint, p_number integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language sql as $$
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
              cast(r.options as text), r.pool
$$;

-- The batch the chain headed by p_head holds, resumed under p_holder with its lease renewed. A new
-- attempt of the chain's activity (p_new_attempt) counts an attempt and takes it over from a
-- holder whose lease ran out (the earlier attempt, dead); the same attempt resuming after it lost
-- PostgreSQL counts none and needs the batch to be its own. Row: the batch, or none.
create function dripline_resume_chain(
    p_run_id bigint, p_head integer, p_holder text, p_lease_millis bigint,
    p_new_attempt boolean)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language sql as $$
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
              cast(r.options as text), r.pool
$$;

-- Fails batch p_number with p_error. Guard: it holds a slot (enqueued or running); a repeat, or a
-- batch that lost its slot, changes nothing. Row: the run's backfill and the seconds the batch held
-- its slot, or none.
create function dripline_fail_batch(p_run_id bigint, p_number integer, p_error text)
    returns table (backfill text, slot_seconds float8)
language sql as $$
    update batches b
       set status = 'failed', error = p_error, finished_at = now(), lease_until = null
      from runs r
     where r.id = b.run_id and b.run_id = p_run_id and b.number = p_number
       and b.status in ('enqueued', 'running')
    returning r.backfill,
              cast(extract(epoch from now() - coalesce(b.enqueued_at, b.started_at)) as float8)
$$;

-- The batches the chain headed by p_head still holds once its holder's lease ran out: back to
-- pending while they have attempts left (failed_attempts < p_max_attempts: an attempt that died
-- with its worker spends none), failed with p_error once they have none. Rows: each batch released,
-- its new status, the run's backfill and the seconds it held its slot.
create function dripline_release_chain_of_failed(
    p_run_id bigint, p_head integer, p_max_attempts integer, p_error text)
    returns table (number integer, status text, backfill text, slot_seconds float8)
language sql as $$
    update batches b
       set status = case when b.failed_attempts < p_max_attempts then 'pending' else 'failed' end,
           error = p_error, chain_head = null, claim_token = null,
           finished_at = case when b.failed_attempts < p_max_attempts then null else now() end,
           holder = null, lease_until = null
      from runs r
     where r.id = b.run_id and b.run_id = p_run_id and b.chain_head = p_head
       and b.status = 'running' and coalesce(b.lease_until, '-infinity') < now()
    returning b.number, b.status, r.backfill,
              cast(extract(epoch from now() - coalesce(b.enqueued_at, b.started_at)) as float8)
$$;

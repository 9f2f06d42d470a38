-- The workflow's claim enqueued the batches its pick had locked with a second statement that found
-- them again by run and number. Which index that statement read was the planner's choice, and
-- with statistics that do not know the run yet (a new run's batches, until the next analyze) it
-- could take one on the run alone and read every index entry of the run, dead ones included
-- (PendingPickIT). The pick now keeps the rows it locked and the claim updates exactly those, by
-- their tuple ids: a TID scan, which reads no index. Locked by this transaction, the rows cannot
-- move before the update. The function keeps V34's per-call plans.

create or replace function dripline_claim_batches(
    p_run_id bigint, p_token bigint, p_limit integer, p_safety_cap integer)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   slots_full boolean, holds text, held_since timestamptz,
                   throttled_millis bigint)
language plpgsql
set plan_cache_mode = force_custom_plan
as $$
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
    v_picked_rows tid[];
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

    select array_agg(p.number), array_agg(p.ctid) into v_picked, v_picked_rows
      from (select b.number, b.ctid from batches b
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
             where b.ctid = any (v_picked_rows) and b.status = 'pending'
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

-- The batch hot path as functions, each written once, whole (docs/design.md, "The claim
-- functions"): the workflow's claim, a chain's claim of its next batch, a batch's completion (the
-- release of its slot) and a chained batch's completion with the claim of the next. BatchStore
-- calls each with a one-line @Query. A plpgsql function runs each statement with a snapshot of its
-- own (read committed), after the row locks the statements before it took.

-- Slot holders of a run: its batches enqueued or running. An index (only) scan of
-- batches_holding_slot_idx, never a bitmap scan: an index scan that meets an entry whose row is
-- dead to every transaction marks it dead, and later scans skip it; a bitmap scan marks nothing.
-- The index keeps one entry per row version, not posting lists (deduplicate_items): every entry of
-- one run has the same key, and a posting list that holds a live holder cannot be marked dead,
-- so each count read its dead entries again (222 of a run's 600 after 300 batches, with 2
-- holders). So a count reads the live holders and the entries that died since the last count, not
-- the claims' churn since the last vacuum (the issue measured 55 entries per count).
alter index batches_holding_slot_idx set (deduplicate_items = off);
reindex index batches_holding_slot_idx;

create function dripline_slot_holders(p_run_id bigint) returns integer
language sql stable
set enable_bitmapscan = off
as $$
    select cast(count(*) as integer) from batches
     where run_id = p_run_id and status in ('enqueued', 'running')
$$;

-- The workflow's claim: up to p_limit of the run's lowest pending batches, enqueued under claim
-- p_token. Under the run row's lock (R5b), whoever asks:
-- * a repeat of the claim (its token's batches still hold slots) is answered from those batches,
--   so it never takes a second set of slots;
-- * a run that something holds (dripline_run_holds: the brake, a health check) takes nothing; its
--   held time is booked on the run row (held_since opened when a hold begins, its time added to
--   throttled_millis when the last ends), written only when a hold begins or ends;
-- * at most the effective cap (the least of the run's recorded cap, its definition's and
--   p_safety_cap) less the run's slot holders.
-- The batches are picked in a statement of their own, locked, and enqueued by number: an UPDATE
-- over "IN (SELECT … LIMIT n FOR UPDATE SKIP LOCKED)" may evaluate the subquery more than once,
-- each time skipping the rows it locked before, and take more rows than its limit (F2 saw 25 and
-- 73 batches claimed at once with a cap of 8).
-- Rows: one per batch claimed, in number order; or one row with no batch (number null). None if
-- the run does not exist. slots_full: fewer batches were taken than asked because the run's slots
-- are full. holds: why the run is held, comma-separated, empty when it is not.
create function dripline_claim_batches(
    p_run_id bigint, p_token bigint, p_limit integer, p_safety_cap integer)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   slots_full boolean, holds text, held_since timestamptz,
                   throttled_millis bigint)
language plpgsql as $$
#variable_conflict use_column
declare
    v_cap integer;
    v_holds text[];
    v_held_since timestamptz;
    v_throttled bigint;
    v_room integer;
    v_limit integer;
    v_picked integer[];
begin
    select least(r.max_parallel_batches, d.max_parallel_batches, p_safety_cap),
           dripline_run_holds(r.backfill), r.held_since, r.throttled_millis
      into v_cap, v_holds, v_held_since, v_throttled
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
        return query select null::integer, null::bytea, null::bytea, null::integer,
                            v_room < p_limit, '', null::timestamptz, v_throttled;
        return;
    end if;

    select array_agg(p.number) into v_picked
      from (select b.number from batches b
             where b.run_id = p_run_id and b.status = 'pending'
             order by b.number limit v_limit
               for update skip locked) p;

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
               v_room < p_limit and (select count(*) from enqueued) = v_limit, '',
               null::timestamptz, v_throttled
          from enqueued e
         order by e.number;
    if not found then
        return query select null::integer, null::bytea, null::bytea, null::integer, false, '',
                            null::timestamptz, v_throttled;
    end if;
end $$;

-- A chain's claim of its next batch (activities/BatchExecution): the run's lowest pending batch
-- taken into the chain headed by p_head (pending -> running, an attempt counted, p_holder's lease
-- of p_lease_millis) if the run is running, not stopping, nothing holds it (dripline_run_holds),
-- its recorded cap covers p_lane, and its slot holders leave a slot free. SKIP LOCKED: two
-- chains, or a chain and the workflow's claim, never take the same batch. The caller either holds
-- the run row's lock (p_locked: a chain that holds no batch adds a holder, and every claim that
-- adds one counts the holders under that lock, R5b) or has just released a slot of the run in the
-- same transaction (dripline_complete_and_claim_next: the new batch replaces that holder).
-- Rows: the batch taken, or none.
create function dripline_chain_next(
    p_run_id bigint, p_head integer, p_lane integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text)
language plpgsql as $$
#variable_conflict use_column
declare
    v_next integer;
begin
    perform 1 from runs r
      where r.id = p_run_id and r.status = 'running' and r.stop_requested_at is null
        and p_lane <= r.max_parallel_batches
        and cardinality(dripline_run_holds(r.backfill)) = 0
        and dripline_slot_holders(r.id) < r.max_parallel_batches;
    if not found then
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
                  cast(r.options as text);
end $$;

-- A chain that holds no batch claims its next one: dripline_chain_next under the run row's lock.
create function dripline_claim_next(
    p_run_id bigint, p_head integer, p_lane integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text)
language plpgsql as $$
begin
    perform 1 from runs where id = p_run_id for update;
    if not found then
        return;
    end if;
    return query select * from dripline_chain_next(
        p_run_id, p_head, p_lane, p_holder, p_lease_millis);
end $$;

-- A batch's completion, which releases its slot: the running -> completed compare-and-set of
-- batch p_number under p_holder, its keys added to the run's processed keys, the batch to its
-- completed batches and to the 'completed' outcome counter (both in shard p_shard, see
-- ShardedCounters), in one transaction. When the batch was not running under p_holder any more it
-- raises SQLSTATE DL001 (dripline_slot_lost, V10): the statement and its transaction abort and
-- nothing of the batch is recorded (a transactional definition's writes roll back with it).
-- Row: the run's backfill and the seconds the batch held its slot (null if unknown).
create function dripline_complete_batch(
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
    insert into run_key_counts (run_id, shard, processed_keys, completed_batches)
    values (p_run_id, p_shard, v_size, 1)
    on conflict (run_id, shard) do update
       set processed_keys = run_key_counts.processed_keys + excluded.processed_keys,
           completed_batches = run_key_counts.completed_batches + 1;
    insert into batch_outcome_counters (backfill, outcome, shard, value)
    values (v_backfill, 'completed', p_shard, 1)
    on conflict (backfill, outcome, shard) do update
       set value = batch_outcome_counters.value + excluded.value;
    return query select v_backfill, v_seconds;
end $$;

-- A chained batch's completion (dripline_complete_batch) and the claim of the chain's next batch
-- (dripline_chain_next), one transaction and one round trip: the next batch replaces the holder
-- just released, so it takes no lock of the run's row. Row: the completion's, with the next batch
-- (number null if the chain took none).
create function dripline_complete_and_claim_next(
    p_run_id bigint, p_number integer, p_holder text, p_shard integer, p_head integer,
    p_lease_millis bigint, p_lane integer)
    returns table (backfill text, slot_seconds float8, number integer, start_key bytea,
                   end_key bytea, size integer, options text)
language plpgsql as $$
#variable_conflict use_column
declare
    v_done record;
begin
    select * into v_done from dripline_complete_batch(p_run_id, p_number, p_holder, p_shard);
    return query
        select v_done.backfill, v_done.slot_seconds, n.number, n.start_key, n.end_key, n.size,
               n.options
          from (values (0)) one
          left join dripline_chain_next(p_run_id, p_head, p_lane, p_holder, p_lease_millis) n
            on true;
end $$;

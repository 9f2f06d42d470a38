-- A chain that holds no batch polls dripline_claim_next every 50 ms for up to a second while
-- planning catches up (BatchExecution.claimOrAwait). Each call took the run row's lock before it
-- looked for a pending batch, so with none pending the run's idle chains queued on that lock one
-- after another, and planning's update of the run row — the page of batches they waited for —
-- queued behind them (pg_stat_statements over W1 at cap 50: 3,353 calls waiting 212 ms each on
-- average, two thirds of them claiming nothing; planning's update of the run row 215 ms).
-- A claim now first looks, without a lock, whether the run has a pending batch at all, and takes
-- the locks and claims as before only if it has. A batch that becomes pending just after the look
-- is taken at the chain's next poll, as one planned just after a claim always was.
create or replace function dripline_claim_next(
    p_run_id bigint, p_head integer, p_lane integer, p_holder text, p_lease_millis bigint)
    returns table (number integer, start_key bytea, end_key bytea, size integer,
                   options text, pool text)
language plpgsql as $$
declare
    v_pool text;
begin
    if not exists (select 1 from batches b
                    where b.run_id = p_run_id and b.status = 'pending'
                      and b.number >= coalesce((select c.pending_from from run_pick_cursors c
                                                 where c.run_id = p_run_id), 1)) then
        return;
    end if;
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

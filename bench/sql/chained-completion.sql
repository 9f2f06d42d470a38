-- bench/chained-completion.sh's run: run 1 running with batch 1 as its chain's head (held by 'h')
-- and the rest pending; runs 2..p_runs completed.
create procedure chain_bench_setup(p_runs integer, p_batches integer)
language plpgsql as $$
begin
    delete from runs;
    insert into runs (id, backfill, options, options_key, batch_size, max_parallel_batches, status)
    select n, 'bench.chain', '{}', '{"n":' || n || '}', 1000, 4,
           case when n = 1 then 'running' else 'completed' end
      from generate_series(1, p_runs) n;
    insert into batches (run_id, number, start_key_bytes, end_key_bytes, size, status)
    select 1, n, dripline_bigint_key(n * 1000), dripline_bigint_key(n * 1000 + 999), 1000,
           'pending'
      from generate_series(1, p_batches) n;
    update batches
       set status = 'running', holder = 'h', chain_head = 1, attempts = 1, started_at = now(),
           enqueued_at = now()
     where run_id = 1 and number = 1;
    commit;
    analyze runs;
    analyze batches;
    analyze run_key_counts;
    analyze run_pick_cursors;
end $$;

-- p_calls chained completions of run 1's chain, one transaction each; raises a notice with the
-- time per call.
create procedure chain_bench_run(p_calls integer)
language plpgsql as $$
declare
    v_number integer := 1;
    v_step record;
    v_started timestamptz := clock_timestamp();
begin
    for i in 1 .. p_calls loop
        select * into v_step
          from dripline_complete_and_claim_next(1, v_number, 'h', v_number % 16, 1, 60000, 1);
        if v_step.number is null then
            raise exception 'the run ran out of pending batches after % calls', i;
        end if;
        v_number := v_step.number;
        commit;
    end loop;
    raise notice 'per call: % us',
        round(extract(epoch from clock_timestamp() - v_started) * 1e6 / p_calls, 1);
end $$;

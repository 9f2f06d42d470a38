-- A failed attempt's record (dripline_attempt_failed, V15) ends its hold as well as its lease: the
-- holder is cleared, so a renewal of the attempt's lease that lands after the record (the lease
-- thread sent it while the attempt still held the batch, e.g. queued behind the row lock of the
-- record statement that failed) matches no row and cannot give the stopped attempt a fresh lease,
-- which the next attempt would wait out (W1 run 169 in docs/benchmarks.md: 30 s). The next attempt
-- takes the batch as from a holder whose lease ran out (dripline_start_batch,
-- dripline_resume_chain). Same guard and result as before.
create or replace function dripline_attempt_failed(
    p_run_id bigint, p_number integer, p_holder text, p_error text, p_counts boolean)
    returns integer
language sql as $$
    update batches set error = p_error, lease_until = now(), holder = null,
           failed_attempts = failed_attempts + case when p_counts then 1 else 0 end
     where run_id = p_run_id and number = p_number and status = 'running' and holder = p_holder
    returning failed_attempts
$$;

-- A batch's failed attempts: those that reported an error (the definition's, or its record's), as
-- against `attempts`, which counts every start, also of attempts that vanished with their worker.
-- Only failures spend a batch's attempts (DRIPLINE_BATCH_MAX_ATTEMPTS); an attempt whose worker
-- died is retried without limit (R12). A retry (R8) gives a re-queued batch its attempts back.
alter table batches add column failed_attempts integer not null default 0;

-- Records the error of an attempt that failed, counts it if p_counts (not when its worker was
-- shutting down), and ends its lease (the next attempt need not wait for it to run out). Guard:
-- the batch is still running under p_holder. Returns the batch's failed attempts so far, or null
-- if the guard did not hold.
create function dripline_attempt_failed(
    p_run_id bigint, p_number integer, p_holder text, p_error text, p_counts boolean)
    returns integer
language sql as $$
    update batches set error = p_error, lease_until = now(),
           failed_attempts = failed_attempts + case when p_counts then 1 else 0 end
     where run_id = p_run_id and number = p_number and status = 'running' and holder = p_holder
    returning failed_attempts
$$;

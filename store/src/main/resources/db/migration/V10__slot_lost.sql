-- Raised by the record statement of a batch whose definition writes in the batch's own transaction
-- (TransactionalBackfillDefinition) when the batch no longer held its slot: its run's slots were
-- recovered, or it was failed, while it ran. That statement is sent together with COMMIT in one
-- round trip (W2 in docs/benchmarks.md); the error aborts the transaction, so the COMMIT behind it
-- does not run and the batch's writes roll back with it. SQLSTATE DL001 is Dripline's own.
create function dripline_slot_lost(p_run_id bigint, p_number integer) returns integer
language plpgsql as $$
begin
    raise exception 'batch % of run % no longer holds its slot', p_number, p_run_id
        using errcode = 'DL001';
end $$;

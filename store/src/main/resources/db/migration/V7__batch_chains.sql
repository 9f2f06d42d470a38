-- Chained batches (activities/BatchExecution): a batch activity that finished its batch takes the
-- run's next pending batch itself, in the same slot, instead of a round trip through Temporal per
-- batch. chain_head is the number of the batch the workflow gave that activity: a retried attempt
-- of the activity finds the chained batch it held when its worker died, and a chain's batches can
-- be told apart from the workflow's claims.
alter table batches add column chain_head integer;

-- Set when the run's workflow handles a stop request; a chaining activity takes no further batch
-- once it is set (pause and a lowered cap are read from status and max_parallel_batches).
alter table runs add column stop_requested_at timestamptz;

-- R5b: the cap is enforced where slots are recorded, and a slot whose holder is dead is recovered.
-- holder names the batch attempt that holds a running batch (activities/BatchAttempt); lease_until
-- is when that holder counts as dead unless it renews the lease first. Another attempt takes a
-- running batch over, and a run recovers its slot, only once lease_until has passed; a batch's
-- record requires its holder. Claims that add a slot holder lock the run row and count holders.
alter table batches add column holder text, add column lease_until timestamptz;

-- Batches running when this migration ran were started by an engine without leases: their
-- attempts get ten minutes to finish before their slots count as abandoned.
update batches set lease_until = now() + interval '10 minutes' where status = 'running';

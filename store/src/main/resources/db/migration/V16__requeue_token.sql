-- The last re-queue (a retry, R8) applied to a run, by the token the workflow gave it, and how many
-- batches it moved back to pending: a call repeated with that token (its local activity run again
-- after a lost workflow task) answers what the first did instead of "nothing to re-queue".
alter table runs add column last_requeue_token text, add column last_requeue_count integer;

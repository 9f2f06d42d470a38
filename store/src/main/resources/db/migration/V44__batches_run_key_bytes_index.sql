-- Batches by key within a run on the bytes alone, for the readers that no longer fall back to the
-- bigint columns (batches_run_key_idx, on the coalesce expression, serves the release before this
-- one until the next release drops it). Built concurrently after dropping what a failed build left.
drop index concurrently if exists batches_run_key_bytes_idx;
create index concurrently batches_run_key_bytes_idx on batches (run_id, start_key_bytes);

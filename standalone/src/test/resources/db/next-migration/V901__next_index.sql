-- An index built concurrently, outside a transaction, after dropping what a failed build left.
drop index concurrently if exists batches_next_idx;
create index concurrently batches_next_idx on batches (run_id, attempts);

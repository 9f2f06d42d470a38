-- A migration of the kind CONTRIBUTING.md asks for (MigrateIT): an index built concurrently, after
-- dropping what a failed build left (an INVALID index of the same name), so it can be tried again.
drop index concurrently if exists batches_attempts_test_idx;
create index concurrently batches_attempts_test_idx on batches (run_id, attempts);

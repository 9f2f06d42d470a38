-- Completed batches per run, kept beside processed keys in the same shard rows and written by the
-- same statement that completes a batch. GET /api/runs/{id} counted a run's batches per status on
-- every request: a scan of the whole run at a million batches (docs/benchmarks.md, W3). Batches
-- in the other statuses are few (planning stays a window ahead) and are still counted, by index.
alter table run_key_counts add column completed_batches bigint not null default 0
    check (completed_batches >= 0);

insert into run_key_counts (run_id, shard, completed_batches)
select run_id, 0, count(*) from batches where status = 'completed' group by run_id
on conflict (run_id, shard) do update set completed_batches = excluded.completed_batches;

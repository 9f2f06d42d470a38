-- A run's progress over its whole life, for the dashboard's throughput chart (O1): its processed
-- keys and completed batches (the sums of its run_key_counts shards) sampled by the workers every
-- dripline.engine.throughput-sample-interval while it runs. sampled_at is the start of the
-- interval (a multiple of it since the epoch), so that several workers write one row per run per
-- interval: the first insert wins, the others do nothing (ProgressSampleRepository.sample).
-- The chart reads at most a fixed number of rows of a run, each the latest sample at or before one
-- of its edges, by the primary key: never a scan of the run's samples or batches.
--
-- The rows go with their run (the cascade). The insert's foreign key check locks each sampled
-- run's row FOR KEY SHARE until the statement commits; of the engine's locks only a claim's FOR
-- UPDATE of that one run's row conflicts with it, and a claim takes no other run's row, so a claim
-- waits at most for one sampling statement and no cycle closes.
create table run_progress_samples (
    run_id            bigint      not null references runs (id) on delete cascade,
    sampled_at        timestamptz not null,
    processed_keys    bigint      not null,
    completed_batches bigint      not null,
    primary key (run_id, sampled_at)
);

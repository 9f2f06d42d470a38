-- Counters that every batch completion of a run (or of a backfill) used to update in one row.
-- Under a cap of 50 the completions queued on that row's lock, each holding it through its commit's
-- WAL flush: the row, not the work, set the pace (docs/benchmarks.md, W1). Each counter is now
-- spread over shards, a batch picking its shard by its number, and readers sum the shards; a
-- completion still adds its keys and its outcome in the same transaction as its compare-and-set,
-- so the counts stay exact.

create table run_key_counts (
    run_id         bigint   not null references runs (id) on delete cascade,
    shard          smallint not null,
    processed_keys bigint   not null default 0 check (processed_keys >= 0),
    primary key (run_id, shard)
);

insert into run_key_counts (run_id, shard, processed_keys)
select id, 0, processed_keys from runs where processed_keys > 0;

alter table runs drop column processed_keys;

alter table batch_outcome_counters add column shard smallint not null default 0;
alter table batch_outcome_counters drop constraint batch_outcome_counters_pkey;
alter table batch_outcome_counters add primary key (backfill, outcome, shard);

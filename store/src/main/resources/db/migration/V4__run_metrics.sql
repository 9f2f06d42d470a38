-- Run metrics (PRODUCT §5): dripline_batches_inflight, dripline_batches_finished_total and
-- dripline_batch_duration_seconds.

-- When the batch last took a slot (pending -> enqueued). The time a batch held its slot is
-- measured from here to its outcome; started_at (first attempt) survives requeues and recoveries,
-- so it cannot measure one tenure of a slot.
alter table batches add column enqueued_at timestamptz;

-- The metrics snapshot counts slot holders per backfill every few seconds: only slot holders are
-- indexed, so that count never scans finished batches.
create index batches_holding_slot_idx on batches (run_id) where status in ('enqueued', 'running');

-- Batch outcomes per backfill, incremented in the transaction that records the outcome, so every
-- process exports the same totals and a repeated attempt never counts twice.
create table batch_outcome_counters (
    backfill text   not null,
    outcome  text   not null check (outcome in ('completed', 'failed', 'stopped')),
    value    bigint not null default 0 check (value >= 0),
    primary key (backfill, outcome)
);

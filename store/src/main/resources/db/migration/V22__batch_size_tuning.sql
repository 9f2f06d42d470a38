-- Batch-size tuning (P4): a definition or a run may set a target batch duration; batches not yet
-- planned are then cut to the size that meets it, between a least and a largest size. A
-- definition's settings as its worker published them; a run's as its creator resolved them (the
-- run's own, else its definition's, else the defaults), all null when the run is not tuned.
-- current_batch_size is the size the run's planner cut its last page to, so a new workflow
-- execution or worker goes on from it. The moving average reads the run's last completed batches
-- through batches_run_status_idx (run_id, status, number): a bounded read, never a scan.
alter table backfill_definitions
  add column target_batch_millis bigint check (target_batch_millis >= 1),
  add column min_batch_size integer check (min_batch_size >= 1),
  add column max_batch_size integer check (max_batch_size >= 1);

alter table runs
  add column target_batch_millis bigint check (target_batch_millis >= 1),
  add column min_batch_size integer check (min_batch_size >= 1),
  add column max_batch_size integer check (max_batch_size >= 1),
  add column current_batch_size integer check (current_batch_size >= 1),
  add constraint runs_batch_tuning_check check (
    target_batch_millis is null
    or (min_batch_size is not null and max_batch_size is not null
        and min_batch_size <= max_batch_size));

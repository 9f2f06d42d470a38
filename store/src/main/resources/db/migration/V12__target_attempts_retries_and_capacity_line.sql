-- Targets (PRODUCT T1, T3, T4, T5): a line for capacity, one run per planning attempt, and the
-- failed run a target retries.

-- When the target last entered pending_backfill. With next_attempt_at it orders the line for
-- capacity: an eligible target's place is the later of the two (when it became eligible), so the
-- one that has waited longest is served first. A lost capacity race writes nothing and keeps it.
alter table targets add column waiting_since timestamptz not null default now();
update targets set waiting_since = updated_at where state = 'pending_backfill';
create index targets_waiting_line_idx
    on targets ((greatest(waiting_since, coalesce(next_attempt_at, waiting_since))), name)
    where state = 'pending_backfill';

-- One planning attempt per capacity slot taken: a call of plan() that is retried after its answer
-- was lost finds the run its first try saved by this id instead of creating a second one. Drawn
-- from a sequence, so a target re-created under the same name never meets an old target's run.
create sequence target_attempts;
alter table targets add column attempt_id bigint;
alter table runs add column target_attempt bigint;
create unique index runs_target_attempt_idx on runs (target_attempt) where target_attempt is not null;

-- The run whose failure the target's streak counts (T5): its next attempt retries that run's
-- failed batches (R8) instead of planning a new run. Cleared by forward progress and by a replan.
alter table targets add column retry_run_id bigint;

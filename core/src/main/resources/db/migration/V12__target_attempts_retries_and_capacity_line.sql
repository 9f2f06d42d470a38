-- Targets (PRODUCT T3, T4, T5): one run per planning attempt, and the failed run a target
-- retries.

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

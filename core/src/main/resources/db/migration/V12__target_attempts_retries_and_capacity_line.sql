-- Targets (PRODUCT T3, T4): one run per planning attempt.

-- One planning attempt per capacity slot taken: a call of plan() that is retried after its answer
-- was lost finds the run its first try saved by this id instead of creating a second one. Drawn
-- from a sequence, so a target re-created under the same name never meets an old target's run.
create sequence target_attempts;
alter table targets add column attempt_id bigint;
alter table runs add column target_attempt bigint;
create unique index runs_target_attempt_idx on runs (target_attempt) where target_attempt is not null;

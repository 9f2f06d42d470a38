-- A run's failure budget (PRODUCT.md P6b, docs/operations.md): once more of its finished batches
-- than max_failed_batches_percent have failed, and at least failure_budget_min_batches have
-- finished, the budget is spent (failure_budget_spent_at) and no new batch of the run starts; the
-- run's workflow pauses it. A resume or a retry renews the budget: it then counts only batches
-- that finish after the renewal (the *_base columns hold the counts at that moment).
alter table backfill_definitions
  add column max_failed_batches_percent double precision
    check (max_failed_batches_percent between 0 and 100);

alter table runs
  add column max_failed_batches_percent double precision
    check (max_failed_batches_percent between 0 and 100),
  add column failure_budget_min_batches integer not null default 20
    check (failure_budget_min_batches >= 1),
  add column failure_budget_spent_at timestamptz,
  add column failure_budget_failed_base bigint not null default 0,
  add column failure_budget_finished_base bigint not null default 0;

-- Run p_run_id's failed and finished (completed or failed) batches: failed ones by index
-- (batches_run_status_idx; they are few while the budget holds), completed ones from the run's
-- sharded counters.
create function dripline_finished_batches(p_run_id bigint, out failed bigint, out finished bigint)
  language sql stable as $$
    select f.n, f.n + c.n
      from (select count(*) as n from batches where run_id = p_run_id and status = 'failed') f,
           (select coalesce(sum(completed_batches), 0) as n from run_key_counts
             where run_id = p_run_id) c
  $$;

-- Spends run p_run_id's failure budget if its batches that finished since the budget was last
-- renewed fail beyond it. Called in the transaction that fails a batch. True if it was spent now.
create function dripline_spend_failure_budget(p_run_id bigint) returns boolean
  language sql as $$
    with spent as (
      update runs r set failure_budget_spent_at = now()
        from dripline_finished_batches(p_run_id) c
       where r.id = p_run_id
         and r.max_failed_batches_percent is not null
         and r.failure_budget_spent_at is null
         and c.finished - r.failure_budget_finished_base >= r.failure_budget_min_batches
         and (c.failed - r.failure_budget_failed_base) * 100.0
             > r.max_failed_batches_percent * (c.finished - r.failure_budget_finished_base)
      returning true
    )
    select coalesce((select true from spent), false)
  $$;

-- Renews run p_run_id's failure budget: from now on it counts only the batches that finish after
-- this. A retry renews it always (its failed batches go back to pending); a resume only when it was
-- spent (p_if_spent). Writes only when the run has a budget.
create function dripline_renew_failure_budget(p_run_id bigint, p_if_spent boolean) returns void
  language sql as $$
    update runs r set failure_budget_spent_at = null,
           failure_budget_failed_base = c.failed,
           failure_budget_finished_base = c.finished
      from dripline_finished_batches(p_run_id) c
     where r.id = p_run_id and r.max_failed_batches_percent is not null
       and (not p_if_spent or r.failure_budget_spent_at is not null)
  $$;

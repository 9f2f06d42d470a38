-- What holds runs (PRODUCT.md P2, P3; docs/operations.md).

-- The brake: one row while every run is held, until released. Written by the API only.
create table throttle_brake (
  id boolean primary key default true check (id),
  reason text not null,
  held_by text not null,
  since timestamptz not null default now()
);

-- Thresholds changed at runtime (PATCH /api/throttle/checks/{name}). They win over the
-- configuration until removed; the evaluator reads them every interval.
create table throttle_check_overrides (
  name text primary key,
  threshold double precision,
  resume_below double precision,
  changed_by text not null,
  changed_at timestamptz not null default now()
);

-- The backfills a check applies to, as the evaluator last wrote it: NULL for every backfill.
alter table throttle_checks add column applies_to text[];

-- Why no new batch of a run of :backfill may start now: 'brake' while the brake is on, and the
-- name of every check that applies to the backfill and holds. Empty when nothing holds it. One
-- row of throttle_brake and one per configured check: a few rows, whatever the number of runs.
create function dripline_run_holds(backfill text) returns text[]
  language sql stable as $$
    select coalesce(array_agg(reason order by reason), '{}')
    from (
      select 'brake' as reason from throttle_brake
      union all
      select c.name from throttle_checks c
      where c.holding and (c.applies_to is null or backfill = any (c.applies_to))
    ) holds
  $$;

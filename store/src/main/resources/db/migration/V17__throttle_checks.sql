-- The last evaluation of each health check (docs/operations.md): one row per check, written by
-- the worker that holds the check's advisory lock for that interval and read by the API (GET
-- /api/throttle) and, later, by the runs it holds. A NULL value is an unknown reading, never 0.
create table throttle_checks (
  name text primary key,
  kind text not null,
  value double precision,
  threshold double precision not null,
  resume_below double precision not null,
  state text not null check (state in ('clear', 'over', 'unknown')),
  holding boolean not null,
  since timestamptz not null,
  evaluated_at timestamptz not null,
  error text
);

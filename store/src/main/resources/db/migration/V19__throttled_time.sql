-- Time a run spent held by the brake or a health check (P2), booked by its claims under the run
-- row's lock: held_since while a hold lasts, throttled_millis for the holds that ended. Throughput
-- and ETA leave it out; dripline_throttled_seconds_total exports it.
alter table runs
  add column held_since timestamptz,
  add column throttled_millis bigint not null default 0;

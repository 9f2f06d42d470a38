-- The runs whose held time the throttle page books (RunRepository.throttlePerBackfill): those held
-- now or held before. Without an index the page read every run to find them; with it, it reads
-- the held ones alone. Updates that set or book a hold are no longer HOT: they are one per hold,
-- not one per batch.
create index runs_throttled_idx on runs (backfill)
    where throttled_millis > 0 or held_since is not null;

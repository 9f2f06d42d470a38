-- V34 planned every statement of the pick functions with each call's values. On a chained batch's
-- completion that is a planning step per batch for dripline_next_pending and
-- dripline_advance_pick_cursor, which the chain's hot path calls for every batch. They keep the
-- plans a session keeps again; the workflow's claim (dripline_claim_batches, which calls the
-- advance) and an idle chain's claim (dripline_claim_next) still plan with each call's values.
alter function dripline_next_pending(bigint, integer, integer) reset plan_cache_mode;
alter function dripline_advance_pick_cursor(bigint, integer) reset plan_cache_mode;

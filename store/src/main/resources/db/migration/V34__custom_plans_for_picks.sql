-- The picks of a run's lowest pending batches (V27, V28) read its batches from the run's pick
-- cursor, so that a pick reads a bounded number of index entries whatever the batches taken
-- before it. Which index entries a statement reads is its plan's: a plan that PostgreSQL keeps for
-- a session (the generic plan, which a PL/pgSQL statement may switch to after five calls on one
-- connection) is made before the cursor's value is known, and can start its scan below the cursor
-- and read every entry the taken batches left behind. These functions plan their statements with
-- the values of each call instead.
alter function dripline_claim_batches(bigint, bigint, integer, integer)
    set plan_cache_mode = force_custom_plan;
alter function dripline_next_pending(bigint, integer, integer)
    set plan_cache_mode = force_custom_plan;
alter function dripline_claim_next(bigint, integer, integer, text, bigint)
    set plan_cache_mode = force_custom_plan;
alter function dripline_advance_pick_cursor(bigint, integer)
    set plan_cache_mode = force_custom_plan;

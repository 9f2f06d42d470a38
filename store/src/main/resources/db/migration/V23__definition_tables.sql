-- The tables a definition declares its batches write (Backfill.tables()), as its worker publishes
-- them: a health check of kind autovacuum (P1; docs/operations.md "Health checks") holds the runs
-- of the definitions it applies to while an autovacuum worker runs on one of their tables. NULL
-- for a definition published by a worker from before this column (it declares none).
alter table backfill_definitions add column tables text[];

-- A paced lane (docs/operations.md "Pacing a run"): after each batch, the lane that ran it rests
-- nice_ratio times that batch's duration before it starts another, keeping its slot. 0 is off. A
-- definition's value as its worker published it; a run's as its creator resolved it (its own, else
-- its definition's). Adding a column with a constant default rewrites neither table.
alter table backfill_definitions
  add column nice_ratio double precision not null default 0
    check (nice_ratio between 0 and 100);

alter table runs
  add column nice_ratio double precision not null default 0
    check (nice_ratio between 0 and 100);

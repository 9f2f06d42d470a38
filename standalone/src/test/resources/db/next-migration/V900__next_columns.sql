-- The next release's migrations, as MigrationUnderTrafficIT applies them while runs go on (test
-- only): columns added to both tables the engine writes, in its transaction and under its locks.
alter table batches add column next_note text;
alter table runs add column next_weight integer not null default 1;

-- A migration that fails for a reason no retry mends (SchemaMigrationIT): a column that does not exist.
select no_such_column from runs;

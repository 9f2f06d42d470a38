-- A table definition's key table (TableBackfillDefinition.table()), published with the
-- definition: the app finds a text key's batch in the order planning cut the batches in, the
-- collation of the key column in that table (docs/keys.md). Null for every other definition, and
-- for one published by a release before this one.
alter table backfill_definitions add column key_table text;

-- How text a compares with text b in the collation of column key_column of table key_table
-- (resolved as to_regclass resolves it): -1, 0 or 1, as the key scan's row comparison and
-- order by compare them. Called by BatchStore.keyTextOrder. Without such a column (the table
-- dropped since) it compares in the database's default collation, the best left to go by.
create function dripline_key_text_order(a text, b text, key_table text, key_column text)
returns integer
language plpgsql stable
as $$
declare
  key_collation text;
  result integer;
begin
  select format('%I.%I', n.nspname, c.collname) into key_collation
  from pg_attribute att
  join pg_collation c on c.oid = att.attcollation
  join pg_namespace n on n.oid = c.collnamespace
  where att.attrelid = to_regclass(key_table) and att.attname = key_column
    and not att.attisdropped;
  if key_collation is null then
    key_collation := 'pg_catalog."default"';
  end if;
  execute format(
    'select case when $1 < ($2 collate %1$s) then -1 when $1 > ($2 collate %1$s) then 1 else 0 end',
    key_collation)
  into result using a, b;
  return result;
end
$$;

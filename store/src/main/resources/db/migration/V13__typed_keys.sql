-- Keys of any ordered type (K1, K2 in docs/spec.md), expand step. Batches and the planning cursor
-- keep keys as order-preserving bytes (KeyCodec: a type tag and the value's bytes per column), so
-- PostgreSQL compares and indexes keys of every type and tuple alike. The bigint columns stay,
-- nullable, for records written by the release before this one: readers take the bytes and fall
-- back to the bigint through dripline_bigint_key; writers fill both while a key is one bigint, so
-- the earlier release can still run beside this one during an upgrade. A later release fills the
-- bytes of every remaining row and drops the bigint columns (contract).

-- KeyCodec's encoding of a bigint key: tag 0x11, then the value big-endian with its sign bit
-- flipped, so the bytes order as the numbers do.
create function dripline_bigint_key(value bigint) returns bytea
    language sql immutable strict parallel safe
    return '\x11'::bytea || int8send(value # (-9223372036854775808)::bigint);

alter table batches alter column start_key drop not null;
alter table batches alter column end_key drop not null;
alter table batches add column start_key_bytes bytea;
alter table batches add column end_key_bytes bytea;

-- The last key cut into a batch, as bytes (plan_cursor holds it for runs planned before).
alter table runs add column plan_cursor_key bytea;

-- The definition's key as the catalogue shows it: [{name, type}].
alter table backfill_definitions add column key jsonb;

-- Batches by key within a run (which batch holds a key): an index scan over old and new rows alike.
create index batches_run_key_idx
    on batches (run_id, (coalesce(start_key_bytes, dripline_bigint_key(start_key))));

-- Typed keys (K2), contract step: every batch holds its keys as bytes. V13 (the expand step) kept
-- the bigint columns for rows written before it; the migrate step fills their bytes in bounded
-- chunks before this migration runs (TypedKeysFill), and the releases that may still run beside
-- this one write the bytes of every batch. Added NOT VALID (a catalogue change under a brief lock);
-- V43 validates it without blocking writes. The bigint columns stay until the next release: the
-- release before this one still writes them.
alter table batches add constraint batches_key_bytes_present
    check (start_key_bytes is not null and end_key_bytes is not null) not valid;

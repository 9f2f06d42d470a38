-- Checks every existing batch against batches_key_bytes_present (V42) under a SHARE UPDATE
-- EXCLUSIVE lock, which lets the engine read and write batches meanwhile.
alter table batches validate constraint batches_key_bytes_present;

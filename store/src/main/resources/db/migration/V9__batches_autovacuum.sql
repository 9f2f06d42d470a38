-- Autovacuum for batches by dead row versions, not by a share of the table. Every batch rewrites
-- its row twice (claimed, then completed); the statement that records a batch and claims the next
-- one works through the dead versions until a vacuum clears them, and autovacuum's default (20 %
-- of the table) is hundreds of thousands of batches away once the table holds a few runs'
-- history. Measured (docs/benchmarks.md, "`batches` and autovacuum"): 200,000 no-op batches at
-- cap 20 took 370 s and 352 s with the default, throughput falling from 800-950 to under 470
-- batches/s, and 209 s with these settings, rising to 1,000-1,200.
alter table batches set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000);

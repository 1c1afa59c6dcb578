-- 019/020's unique index on a block's tx indexes repeated a rule the observer already checks before anything
-- is written (ingest/message-checks.ts: a block's tx_index values are 0..n-1, a microblock's unique), and it
-- cost every ingested tx one more b-tree insert: ~140 bytes of index per tx, part of a measured +21% of
-- PostgreSQL CPU per ingested tx after migrations 017-020 (bench:compare's ingest runs, small chain, six
-- interleaved runs). The rule lives once, in the check; txs_block_idx still serves the lookups by block.
DROP INDEX txs_block_tx_index_idx;

-- The principal index's primary key (principal, tx_id, index_block_hash, microblock_hash) was its widest index:
-- four texts of 41-128 bytes a row, 709 index bytes per tx on the 500-block bench chain (2.4 rows a tx), a
-- random b-tree insert for every row, and the largest share of ingest's statement time (bench/RESULTS.md
-- "Ingest profile, 99,780 txs"). No statement needs it unique: a new block's rows are new (its
-- index_block_hash is new, its tx keys distinct: ingest/apply-block.ts `fresh`), and the other inserts
-- (microblock rows, a block repeating a tx) skip a row already stored with an explicit probe
-- (store/write/blocks.ts), as ON CONFLICT did. What reads by it is the lookup of one principal's row of a tx
-- (store/read/account-txs.ts `accountTxWithTransfersOf`) and those probes: an index on tx_id alone serves both,
-- the principal checked on the tx's few rows. The rows of a tx share its key, which b-tree deduplication
-- stores once for them all (a posting list) on one leaf page: one small entry per tx instead of a wide one
-- per row.
ALTER TABLE principal_txs DROP CONSTRAINT principal_txs_pkey;
CREATE INDEX principal_txs_tx_idx ON principal_txs (tx_id);

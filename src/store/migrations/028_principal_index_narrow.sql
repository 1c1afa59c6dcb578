-- The principal index's primary key (principal, tx_id, index_block_hash, microblock_hash) was its widest index:
-- four texts of 41-128 bytes a row, 706 index bytes per tx on the 500-block bench chain (2.4 rows a tx), and
-- a random b-tree insert for every row, in the statement with the largest share of ingest's time (bench
-- finding F-ingest-principal-index). No statement needs it unique: a new block's rows are new (its
-- index_block_hash is new, its tx keys distinct: ingest/apply-block.ts `fresh`), and the other inserts
-- (microblock rows, a block repeating a tx) skip a row already stored with an explicit probe
-- (store/write/blocks.ts), as ON CONFLICT did. What reads by it is the lookup of one principal's row of a tx
-- (store/read/account-txs.ts `accountTxWithTransfersOf`) and those probes: (tx_id, principal) serves both,
-- a tx's rows side by side on one leaf page. Not tx_id alone (157 bytes per tx, its rows deduplicated): the
-- genesis tx has a row per genesis account (10,000 on the bench chains), and the lookup's generic plan then
-- read them all, 7.8 ms a call instead of 0.5.
ALTER TABLE principal_txs DROP CONSTRAINT principal_txs_pkey;
CREATE INDEX principal_txs_tx_idx ON principal_txs (tx_id, principal);

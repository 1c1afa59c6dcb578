-- 019's unique (index_block_hash, tx_index) is wrong for blocks that confirm streamed microblocks: a tx
-- streamed in a microblock and confirmed by the block canonical on arrival keeps the index it was streamed
-- with (ingest/apply-block.ts placeConfirmedMicroblockTxs, as the original API answers), numbered from 0 in
-- each microblock, so it can share a tx_index with the block's own txs or another microblock's (the
-- recorded mainnet-reorg-scenario1 and -scenario2 chains hold such blocks). Unique per microblock instead:
-- a block's own txs (microblock_hash '') are numbered 0..n-1 by the block message, each streamed
-- microblock's from 0 by its microblock message, and a microblock first seen in a block takes the block
-- message's indexes. Same name, so the error a writer gets names the same rule.
DROP INDEX txs_block_tx_index_idx;
CREATE UNIQUE INDEX txs_block_tx_index_idx ON txs (index_block_hash, microblock_hash, tx_index)
  WHERE index_block_hash <> '' AND block_height <> 1;

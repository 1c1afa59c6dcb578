-- A confirmed microblock tx keeps the tx_index it was streamed with when the block canonical on arrival
-- adopts its streamed row (ingest/apply-block.ts placeConfirmedMicroblockTxs, as the original API answers):
-- a microblock numbers its txs from 0, so such a row can share its block's tx_index with an anchored tx or
-- a tx of another microblock. Indexes stay unique within one microblock and among the anchored txs (whose
-- microblock_sequence is 2147483647): 019's index, keyed on the sequence too.
DROP INDEX txs_block_tx_index_idx;
CREATE UNIQUE INDEX txs_block_tx_index_idx ON txs (index_block_hash, microblock_sequence, tx_index)
  WHERE index_block_hash <> '' AND block_height <> 1;

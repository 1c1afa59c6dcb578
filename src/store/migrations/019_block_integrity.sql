-- Blocks checked inside (issue 14, item 8).
-- The observer message each block came in (its raw-log row's content hash): a later message naming the same
-- index_block_hash is compared with it on content, so a re-serialized copy is a duplicate and one with other
-- content is refused (ingest/apply-block.ts). Blocks stored before this migration have none (NULL).
ALTER TABLE blocks ADD COLUMN message_hash text COLLATE "C";

-- A block's transactions are numbered 0..n-1: no two rows of one block share a tx_index. Ingest refuses such
-- a message first (ingest/message-checks.ts); this index keeps any other writer from storing one. Two
-- exceptions by design: height 1, where the genesis block's rows adopted into block 1 share tx indexes with
-- block 1's own (store/write/genesis.ts, as the original API shows them), and unconfirmed microblock rows
-- (index_block_hash ''), numbered per microblock. A block's entries are adjacent in this index, so a block
-- costs one leaf page of it, not a random insert per tx.
-- Events need no new index: their primary key (tx_id, index_block_hash, microblock_hash, event_index) is
-- unique, and ingest numbers each tx's events 0..n-1 itself (after refusing repeated node event indexes).
CREATE UNIQUE INDEX txs_block_tx_index_idx ON txs (index_block_hash, tx_index)
  WHERE index_block_hash <> '' AND block_height <> 1;

-- What the chain ending at each block holds, from its first block up to and including that block: the totals
-- the chain-wide lists answer with (`total`) and page by. A block's chain never changes (its parent is fixed,
-- and so are the rows mined in it), so a block's totals are written once, when it is stored, from its parent's
-- totals and its own rows (store/write/chain-totals.ts), and are never corrected by a reorg: the canonical
-- chain's totals are those of the tip block, and a page at any depth is an index seek on them (the lowest
-- canonical block whose running total reaches the position) instead of an OFFSET over every row above it.
--   blocks       blocks of the chain (a genesis block 0 counts none: its rows move into block 1,
--                store/write/genesis.ts, and it is never canonical)
--   tx_count     the sum of the blocks' `tx_count` (the transactions each block message carried)
--   tx_rows      the `txs` rows mined in the chain's blocks (what the transaction lists page over); then the
--                same per transaction type as the API names it (coinbase forms and versioned deploys fold in)
--   burn_blocks  how many distinct burn block heights the chain's blocks above its first one were mined in:
--                heights only rise along a chain, but from its first block (whose parent is not indexed,
--                so whose burn height was never checked: ingest/message-checks.ts), which counts 0
-- A genesis block 0 counts nothing at all; its rows are counted by block 1, which adopts them.
CREATE TABLE chain_totals (
  index_block_hash text COLLATE "C" PRIMARY KEY,
  block_height integer NOT NULL,
  burn_block_height integer NOT NULL,
  blocks integer NOT NULL,
  tx_count bigint NOT NULL,
  tx_rows bigint NOT NULL,
  token_transfer_txs bigint NOT NULL,
  smart_contract_txs bigint NOT NULL,
  contract_call_txs bigint NOT NULL,
  poison_microblock_txs bigint NOT NULL,
  coinbase_txs bigint NOT NULL,
  tenure_change_txs bigint NOT NULL,
  burn_blocks integer NOT NULL
);
-- The lowest block whose running total reaches a position (forks share values: the reads keep the canonical).
CREATE INDEX chain_totals_tx_rows_idx ON chain_totals (tx_rows, block_height);
CREATE INDEX chain_totals_burn_blocks_idx ON chain_totals (burn_blocks, block_height);

-- The blocks indexed so far: each block's own counts (type ids as store/schema/codes.ts TxTypeId), then the
-- totals down the tree of blocks from the first block of each chain (no indexed parent), each child found by
-- its parent through an index, so the walk costs one probe per block whatever the chain's length.
CREATE TEMPORARY TABLE own_totals ON COMMIT DROP AS
SELECT b.index_block_hash, b.parent_index_block_hash, b.block_height, b.burn_block_height,
  CASE WHEN b.block_height = 0 THEN 0 ELSE 1 END AS blocks,
  CASE WHEN b.block_height = 0 THEN 0 ELSE b.tx_count END AS tx_count,
  coalesce(r.tx_rows, 0) AS tx_rows,
  coalesce(r.token_transfer_txs, 0) AS token_transfer_txs,
  coalesce(r.smart_contract_txs, 0) AS smart_contract_txs,
  coalesce(r.contract_call_txs, 0) AS contract_call_txs,
  coalesce(r.poison_microblock_txs, 0) AS poison_microblock_txs,
  coalesce(r.coinbase_txs, 0) AS coinbase_txs,
  coalesce(r.tenure_change_txs, 0) AS tenure_change_txs
FROM blocks b
LEFT JOIN (
  SELECT t.index_block_hash,
    count(*) AS tx_rows,
    count(*) FILTER (WHERE t.type_id = 0) AS token_transfer_txs,
    count(*) FILTER (WHERE t.type_id IN (1, 6)) AS smart_contract_txs,
    count(*) FILTER (WHERE t.type_id = 2) AS contract_call_txs,
    count(*) FILTER (WHERE t.type_id = 3) AS poison_microblock_txs,
    count(*) FILTER (WHERE t.type_id IN (4, 5, 8)) AS coinbase_txs,
    count(*) FILTER (WHERE t.type_id = 7) AS tenure_change_txs
  FROM txs t WHERE t.index_block_hash <> '' GROUP BY t.index_block_hash
) AS r ON r.index_block_hash = b.index_block_hash AND b.block_height <> 0;
CREATE INDEX ON own_totals (parent_index_block_hash);
ANALYZE own_totals;

WITH RECURSIVE chain AS (
  SELECT o.index_block_hash, o.block_height, o.burn_block_height, o.blocks, o.tx_count, o.tx_rows,
    o.token_transfer_txs, o.smart_contract_txs, o.contract_call_txs, o.poison_microblock_txs, o.coinbase_txs,
    o.tenure_change_txs, 0 AS burn_blocks
  FROM own_totals o
  WHERE NOT EXISTS (SELECT FROM blocks p WHERE p.index_block_hash = o.parent_index_block_hash)
  UNION ALL
  SELECT o.index_block_hash, o.block_height, o.burn_block_height, c.blocks + o.blocks, c.tx_count + o.tx_count,
    c.tx_rows + o.tx_rows, c.token_transfer_txs + o.token_transfer_txs,
    c.smart_contract_txs + o.smart_contract_txs, c.contract_call_txs + o.contract_call_txs,
    c.poison_microblock_txs + o.poison_microblock_txs, c.coinbase_txs + o.coinbase_txs,
    c.tenure_change_txs + o.tenure_change_txs,
    CASE WHEN c.burn_blocks = 0 OR o.burn_block_height > c.burn_block_height THEN c.burn_blocks + 1
      ELSE c.burn_blocks END
  FROM chain c JOIN own_totals o ON o.parent_index_block_hash = c.index_block_hash
)
INSERT INTO chain_totals (index_block_hash, block_height, burn_block_height, blocks, tx_count, tx_rows,
  token_transfer_txs, smart_contract_txs, contract_call_txs, poison_microblock_txs, coinbase_txs,
  tenure_change_txs, burn_blocks)
SELECT index_block_hash, block_height, burn_block_height, blocks, tx_count, tx_rows, token_transfer_txs,
  smart_contract_txs, contract_call_txs, poison_microblock_txs, coinbase_txs, tenure_change_txs, burn_blocks
FROM chain;

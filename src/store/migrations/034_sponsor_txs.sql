-- The transactions a principal sponsored without otherwise taking part in them: the rows the principal index
-- (principal_txs) leaves out, as the v1 address lists do, and the v2 address list adds. Kept for the
-- canonical anchored chain only: a block's rows are added when it becomes canonical and deleted when a reorg
-- orphans it (orphaned blocks are always the newest, so what remains stays numbered 1..n).
--   sponsor_ordinal  numbers the sponsor's rows here 1..n in chain order (height, microblock sequence, tx index)
--   list_ordinal     the row's place in the sponsor's whole list (its principal index rows and these, merged in
--                    chain order): its sponsor_ordinal plus the sponsor's principal index ordinal before it
-- A page of that list at any offset is then two index ranges: these rows by list_ordinal, and the principal
-- index rows by their ordinal shifted by how many of these come before (store/read/address-history.ts).
CREATE TABLE sponsor_txs (
  sponsor text COLLATE "C" NOT NULL,
  tx_id text COLLATE "C" NOT NULL,
  index_block_hash text COLLATE "C" NOT NULL,
  microblock_hash text COLLATE "C" NOT NULL,
  block_height integer NOT NULL,
  microblock_sequence integer NOT NULL,
  tx_index integer NOT NULL,
  sponsor_ordinal bigint NOT NULL,
  list_ordinal bigint NOT NULL,
  PRIMARY KEY (sponsor, sponsor_ordinal)
);
CREATE UNIQUE INDEX sponsor_txs_list_idx ON sponsor_txs (sponsor, list_ordinal);
CREATE INDEX sponsor_txs_block_idx ON sponsor_txs (index_block_hash);

-- The canonical anchored chain indexed so far.
INSERT INTO sponsor_txs (sponsor, tx_id, index_block_hash, microblock_hash, block_height, microblock_sequence,
  tx_index, sponsor_ordinal, list_ordinal)
SELECT s.sponsor, s.tx_id, s.index_block_hash, s.microblock_hash, s.block_height, s.microblock_sequence,
  s.tx_index, s.n, s.n + coalesce((
    SELECT p.ordinal FROM principal_txs p
    WHERE p.principal = s.sponsor AND p.ordinal IS NOT NULL AND p.block_height <= s.block_height
      AND (p.block_height, p.microblock_sequence, p.tx_index) < (s.block_height, s.microblock_sequence, s.tx_index)
    ORDER BY p.block_height DESC, p.ordinal DESC LIMIT 1), 0)
FROM (
  SELECT t.sponsor_address AS sponsor, t.tx_id, t.index_block_hash, t.microblock_hash, t.block_height,
    t.microblock_sequence, t.tx_index,
    row_number() OVER (PARTITION BY t.sponsor_address
      ORDER BY t.block_height, t.microblock_sequence, t.tx_index, t.tx_id) AS n
  FROM txs t
  WHERE t.sponsored AND t.canonical AND t.microblock_canonical AND t.index_block_hash <> ''
    AND NOT EXISTS (
      SELECT FROM principal_txs p
      WHERE p.tx_id = t.tx_id AND p.principal = t.sponsor_address AND p.index_block_hash = t.index_block_hash
        AND p.microblock_hash = t.microblock_hash)
) AS s;

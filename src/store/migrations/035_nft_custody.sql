-- Who holds each non-fungible token: an NFT (asset identifier, value) belongs to the recipient of its latest
-- canonical anchored NFT event (height, microblock sequence, tx index, event index); a burn (no recipient)
-- ends its custody, and so does losing its only events to a reorg. One row per NFT held, with the event that
-- gave it: the NFTs a principal holds are one index range, newest first (store/read/nft-holdings.ts). Ingest
-- keeps it (store/write/nft-custody.ts): a new block's NFT events from the rows in hand, a reorg's by reading
-- the latest event of every NFT its blocks moved.
-- Keyed by the md5 of the value's text: a Clarity value may be larger than a b-tree entry can hold (~2.7 kB),
-- and md5 takes any text (a hash of the decoded bytes would fail, and stall ingest, on a value of odd length).
CREATE TABLE nft_custody (
  asset_identifier text COLLATE "C" NOT NULL,
  value text NOT NULL,
  value_repr text NOT NULL,
  owner text COLLATE "C" NOT NULL,
  tx_id text COLLATE "C" NOT NULL,
  index_block_hash text COLLATE "C" NOT NULL,
  microblock_hash text COLLATE "C" NOT NULL,
  block_height integer NOT NULL,
  microblock_sequence integer NOT NULL,
  tx_index integer NOT NULL,
  event_index integer NOT NULL
);
CREATE UNIQUE INDEX nft_custody_key_idx ON nft_custody (asset_identifier, md5(value));
CREATE INDEX nft_custody_owner_idx
  ON nft_custody (owner, block_height, microblock_sequence, tx_index, event_index);

-- An NFT's events in chain order, to find its latest one when a reorg takes some away. Only NFT events (kind 3).
CREATE INDEX events_nft_key_idx
  ON events (asset_identifier, md5(value), block_height, microblock_sequence, tx_index,
    event_index)
  WHERE kind = 3;

-- The chain indexed so far.
INSERT INTO nft_custody (asset_identifier, value, value_repr, owner, tx_id, index_block_hash, microblock_hash,
  block_height, microblock_sequence, tx_index, event_index)
SELECT asset_identifier, value, value_repr, recipient, tx_id, index_block_hash, microblock_hash, block_height,
  microblock_sequence, tx_index, event_index
FROM (
  SELECT DISTINCT ON (e.asset_identifier, e.value) e.*
  FROM events e
  WHERE e.kind = 3 AND e.canonical AND e.microblock_canonical AND e.index_block_hash <> ''
    AND e.asset_identifier IS NOT NULL AND e.value IS NOT NULL
  ORDER BY e.asset_identifier, e.value, e.block_height DESC, e.microblock_sequence DESC, e.tx_index DESC,
    e.event_index DESC
) AS latest
WHERE recipient IS NOT NULL;

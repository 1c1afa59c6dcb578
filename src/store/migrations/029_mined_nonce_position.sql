-- Same-nonce settling from the stored txs (store/write/mempool.ts `SETTLE_FROM_STORED`: mempool messages,
-- sibling blocks, reorgs, read-back) needs only the last canonical mined tx of a (payer, nonce) pair. As
-- sender that is the one tx of the nonce (a sender uses a nonce once on the canonical chain); as sponsor,
-- 017's index on (sponsor_address, nonce) made it read every mined tx of the pair, and a sponsor's pair
-- (sponsor, origin nonce) gathers every tx it sponsors with that nonce, a number that grows with the chain.
-- The same index with the chain position after the pair, then the id (descending: read backwards, a tie on
-- the position comes lowest id first, as the ranking breaks it), lets it read one entry backwards (LIMIT 1)
-- with no sort: without the id, the planner sorted every row of the pair for the tie. It replaces 017's
-- (no statement needs the narrower one), under the same name, still partial on sponsored: no more entries,
-- wider ones (~80 bytes) for sponsored txs only. The canonical flags stay out of it: nearly every tx is
-- canonical, and the probe skips an orphaned copy at the cost of reading its row.
DROP INDEX txs_sponsor_nonce_idx;
CREATE INDEX txs_sponsor_nonce_idx
  ON txs (sponsor_address, nonce, block_height, microblock_sequence, tx_index, tx_id DESC) WHERE sponsored;

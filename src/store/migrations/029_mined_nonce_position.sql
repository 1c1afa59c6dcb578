-- Same-nonce settling from the stored txs (store/write/mempool.ts `SETTLE_FROM_STORED`: mempool messages,
-- sibling blocks, reorgs, read-back) needs only the last canonical mined tx of a (payer, nonce) pair, as
-- sender and as sponsor; 017's indexes on (address, nonce) made it read every mined tx of the pair, and a
-- sponsor's pair (sponsor, origin nonce) gathers every tx it sponsors with that nonce, a number that grows
-- with the chain. The same indexes with the chain position after the pair let it read one entry backwards
-- (LIMIT 1). They replace 017's rather than join them (no statement needs the narrower ones; no more index
-- entries a tx, each 12 bytes wider), under the same names, still partial on sponsored for the sponsor's.
-- The canonical flags stay out of them: nearly every tx is canonical, so a partial index on them would hold
-- nearly the same entries, and a reorg's flips would change its key set; the probe skips an orphaned copy
-- at the cost of reading its row.
DROP INDEX txs_sender_nonce_idx;
CREATE INDEX txs_sender_nonce_idx ON txs (sender_address, nonce, block_height, microblock_sequence, tx_index);
DROP INDEX txs_sponsor_nonce_idx;
CREATE INDEX txs_sponsor_nonce_idx ON txs (sponsor_address, nonce, block_height, microblock_sequence, tx_index)
  WHERE sponsored;

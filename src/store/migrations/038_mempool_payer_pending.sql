-- A payer's pending mempool txs by nonce (store/read/nonces.ts, the pending totals of store/read/balances.ts):
-- `pruned` a key column rather than the predicate of a partial index, so "this sender, not pruned" is one index
-- range whatever plan runs. The partial indexes of 001 keep the pages every pruned entry ever used (the 1M-tx
-- chain: 1,719 pages for 84 entries), so PostgreSQL's generic plan of a prepared read, costed on those pages,
-- preferred a BitmapAnd over the sender's every mempool entry (the busiest sender's 69,904 pruned ones: 1,411
-- buffers, 24-64 ms a step; F-read-busiest-nonces-unstable). These replace them: they serve what they served.
CREATE INDEX mempool_sender_pending_nonce_idx ON mempool_txs (sender_address, pruned, nonce);
CREATE INDEX mempool_sponsor_pending_nonce_idx ON mempool_txs (sponsor_address, pruned, sponsor_nonce)
  WHERE sponsored;
DROP INDEX mempool_sender_nonce_idx, mempool_sponsor_nonce_idx;

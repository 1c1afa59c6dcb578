-- Settling a (payer, nonce) pair (store/write/mempool.ts resolveSameNonce) reads every mempool tx of the
-- pair, pending or dropped, by sender and by sponsor, and the canonical txs mined with it: the mempool
-- indexes so far covered pending rows only, and txs had no nonce index (a busy sender's txs were scanned
-- by height for each pair).
CREATE INDEX mempool_sender_any_nonce_idx ON mempool_txs (sender_address, nonce);
CREATE INDEX mempool_sponsor_any_nonce_idx ON mempool_txs (sponsor_address, nonce) WHERE sponsored;
CREATE INDEX txs_sender_nonce_idx ON txs (sender_address, nonce);
CREATE INDEX txs_sponsor_nonce_idx ON txs (sponsor_address, nonce) WHERE sponsored;

-- Indexes of the lists beyond the contract's ten routes (docs/upstream.md C), each read by a seek.

-- A burn block by its hash: the Stacks blocks mined in it.
CREATE INDEX blocks_burn_block_hash_idx ON blocks (burn_block_hash);

-- Transactions of some types in chain order, newest first: one range per type id, merged in order
-- (store/read/recent-txs.ts). Rows of one type are appended at the end of their range, as blocks arrive.
CREATE INDEX txs_type_chain_idx ON txs (type_id, block_height, microblock_sequence, tx_index);

-- A sponsor's highest sponsor nonce, mined (the nonces a wallet asks for before it signs).
CREATE INDEX txs_sponsor_sponsor_nonce_idx ON txs (sponsor_address, sponsor_nonce) WHERE sponsored;

-- The pending mempool by receipt time, fee and size (its list's three orders), and by called contract (its
-- address filter); the id breaks ties so that pages follow one order.
CREATE INDEX mempool_pending_receipt_idx ON mempool_txs (receipt_time, tx_id) WHERE NOT pruned;
CREATE INDEX mempool_pending_fee_idx ON mempool_txs (fee_rate, tx_id) WHERE NOT pruned;
CREATE INDEX mempool_pending_size_idx ON mempool_txs (tx_size, tx_id) WHERE NOT pruned;
CREATE INDEX mempool_pending_contract_call_idx ON mempool_txs (contract_call_contract_id)
  WHERE NOT pruned AND contract_call_contract_id IS NOT NULL;

-- The chain index. Conventions:
--   * hashes, ids and principals are lowercase 0x-hex / c32 text in "C" collation (byte order, no locale cost);
--     an empty string stands for "none" (unconfirmed microblock rows have index_block_hash = '');
--   * amounts are numeric (served as decimal strings), heights and indexes integer, times bigint (unix seconds);
--   * rows are never deleted by reorgs: canonical / microblock_canonical flags flip instead.

CREATE TABLE chain_tip (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  block_height integer NOT NULL DEFAULT 0,
  index_block_hash text COLLATE "C" NOT NULL DEFAULT '',
  block_hash text COLLATE "C" NOT NULL DEFAULT '',
  burn_block_height integer NOT NULL DEFAULT 0,
  -- last unconfirmed microblock built on the tip ('' when none)
  microblock_hash text COLLATE "C" NOT NULL DEFAULT '',
  microblock_sequence integer NOT NULL DEFAULT -1,
  -- bumped by every change of the mempool; keys the mempool caches and ETags
  mempool_version bigint NOT NULL DEFAULT 0,
  mempool_updated_at timestamptz NOT NULL DEFAULT now(),
  -- PoX force-unlock burn heights announced by the node (pox_v1..v4_unlock_height)
  pox_v1_unlock_height integer,
  pox_v2_unlock_height integer,
  pox_v3_unlock_height integer,
  pox_v4_unlock_height integer
);
INSERT INTO chain_tip (id) VALUES (true);

-- Every message received on the event-observer port, in arrival order: the source for export and rebuilds.
CREATE TABLE observer_messages (
  id bigserial PRIMARY KEY,
  received_at timestamptz NOT NULL,
  path text NOT NULL,
  payload text NOT NULL,
  -- sha256 of path and payload: a re-delivered message is recognised and not applied twice
  content_hash text COLLATE "C" NOT NULL UNIQUE
);

CREATE TABLE blocks (
  index_block_hash text COLLATE "C" PRIMARY KEY,
  block_hash text COLLATE "C" NOT NULL,
  block_height integer NOT NULL,
  parent_index_block_hash text COLLATE "C" NOT NULL,
  parent_block_hash text COLLATE "C" NOT NULL,
  parent_microblock_hash text COLLATE "C" NOT NULL,
  parent_microblock_sequence integer NOT NULL,
  burn_block_hash text COLLATE "C" NOT NULL,
  burn_block_height integer NOT NULL,
  burn_block_time bigint NOT NULL,
  parent_burn_block_time bigint NOT NULL,
  -- the node's block_time (Nakamoto), else the burn block time
  block_time bigint NOT NULL,
  miner_txid text COLLATE "C" NOT NULL,
  tenure_height integer,
  signer_bitvec text,
  tx_count integer NOT NULL,
  execution_cost_read_count bigint NOT NULL,
  execution_cost_read_length bigint NOT NULL,
  execution_cost_runtime bigint NOT NULL,
  execution_cost_write_count bigint NOT NULL,
  execution_cost_write_length bigint NOT NULL,
  canonical boolean NOT NULL
);
CREATE INDEX blocks_block_hash_idx ON blocks (block_hash);
CREATE UNIQUE INDEX blocks_canonical_height_idx ON blocks (block_height) WHERE canonical;
CREATE INDEX blocks_height_idx ON blocks (block_height);
CREATE INDEX blocks_burn_height_idx ON blocks (burn_block_height, canonical, block_height);
CREATE INDEX blocks_parent_idx ON blocks (parent_index_block_hash);

CREATE TABLE burn_blocks (
  burn_block_hash text COLLATE "C" PRIMARY KEY,
  burn_block_height integer NOT NULL,
  burn_amount numeric NOT NULL,
  reward_recipients jsonb NOT NULL,
  reward_slot_holders jsonb NOT NULL,
  canonical boolean NOT NULL
);
CREATE INDEX burn_blocks_height_idx ON burn_blocks (burn_block_height);

CREATE TABLE microblocks (
  microblock_hash text COLLATE "C" PRIMARY KEY,
  microblock_sequence integer NOT NULL,
  microblock_parent_hash text COLLATE "C" NOT NULL,
  -- the anchored block this stream builds on
  parent_index_block_hash text COLLATE "C" NOT NULL,
  -- the anchored block that confirmed it ('' while unconfirmed)
  index_block_hash text COLLATE "C" NOT NULL,
  block_height integer NOT NULL,
  burn_block_hash text COLLATE "C" NOT NULL,
  burn_block_height integer NOT NULL,
  burn_block_time bigint NOT NULL,
  microblock_canonical boolean NOT NULL,
  received_at bigint NOT NULL
);
CREATE INDEX microblocks_parent_idx ON microblocks (parent_index_block_hash, microblock_sequence);

-- One row per (transaction, block, microblock) it was mined in; the same tx may sit in several forks.
CREATE TABLE txs (
  tx_id text COLLATE "C" NOT NULL,
  index_block_hash text COLLATE "C" NOT NULL,
  microblock_hash text COLLATE "C" NOT NULL,
  block_hash text COLLATE "C" NOT NULL,
  block_height integer NOT NULL,
  block_time bigint NOT NULL,
  burn_block_time bigint NOT NULL,
  burn_block_height integer NOT NULL,
  parent_burn_block_time bigint NOT NULL,
  parent_block_hash text COLLATE "C" NOT NULL,
  parent_index_block_hash text COLLATE "C" NOT NULL,
  tx_index integer NOT NULL,
  -- 2147483647 when anchored, so anchored txs sort after the block's microblock txs
  microblock_sequence integer NOT NULL,
  canonical boolean NOT NULL,
  microblock_canonical boolean NOT NULL,
  -- 1 success, -1 abort_by_response, -2 abort_by_post_condition, -3 problematic_skipped
  status smallint NOT NULL,
  raw_result text NOT NULL,
  -- Clarity repr of raw_result, rendered once at ingest
  result_repr text NOT NULL,
  vm_error text,
  event_count integer NOT NULL,
  execution_cost_read_count bigint NOT NULL,
  execution_cost_read_length bigint NOT NULL,
  execution_cost_runtime bigint NOT NULL,
  execution_cost_write_count bigint NOT NULL,
  execution_cost_write_length bigint NOT NULL,
  -- decoded transaction (same columns as mempool_txs)
  type_id smallint NOT NULL,
  nonce bigint NOT NULL,
  fee_rate numeric NOT NULL,
  sender_address text COLLATE "C" NOT NULL,
  sponsored boolean NOT NULL,
  sponsor_address text COLLATE "C",
  sponsor_nonce bigint,
  anchor_mode smallint NOT NULL,
  post_condition_mode smallint NOT NULL,
  post_conditions jsonb NOT NULL,
  -- the API's type-specific member, e.g. {"token_transfer": {...}}
  payload jsonb NOT NULL,
  token_transfer_recipient text COLLATE "C",
  token_transfer_amount numeric,
  contract_call_contract_id text COLLATE "C",
  smart_contract_contract_id text COLLATE "C",
  raw_tx text NOT NULL,
  tx_size integer NOT NULL,
  PRIMARY KEY (tx_id, index_block_hash, microblock_hash)
);
CREATE INDEX txs_block_idx ON txs (index_block_hash, microblock_sequence, tx_index);
CREATE INDEX txs_microblock_idx ON txs (microblock_hash) WHERE microblock_hash <> '';
CREATE INDEX txs_contract_deploy_idx ON txs (smart_contract_contract_id, block_height DESC)
  WHERE smart_contract_contract_id IS NOT NULL;

-- Events of successful transactions, all kinds in one table so a transaction's events are one index range.
-- kind: 1 stx_asset, 2 fungible_token_asset, 3 non_fungible_token_asset, 4 stx_lock, 5 smart_contract_log
-- asset_event_type: 1 transfer, 2 mint, 3 burn
CREATE TABLE events (
  tx_id text COLLATE "C" NOT NULL,
  index_block_hash text COLLATE "C" NOT NULL,
  microblock_hash text COLLATE "C" NOT NULL,
  event_index integer NOT NULL,
  block_height integer NOT NULL,
  tx_index integer NOT NULL,
  microblock_sequence integer NOT NULL,
  canonical boolean NOT NULL,
  microblock_canonical boolean NOT NULL,
  kind smallint NOT NULL,
  asset_event_type smallint,
  sender text COLLATE "C",
  recipient text COLLATE "C",
  amount numeric,
  asset_identifier text COLLATE "C",
  -- Clarity value (nft asset value, contract log value) as 0x-hex, and its repr rendered at ingest
  value text,
  value_repr text,
  memo text,
  contract_id text COLLATE "C",
  topic text,
  locked_address text COLLATE "C",
  unlock_height bigint,
  PRIMARY KEY (tx_id, index_block_hash, microblock_hash, event_index)
);
CREATE INDEX events_block_idx ON events (index_block_hash);
CREATE INDEX events_sender_idx ON events (sender, block_height) WHERE sender IS NOT NULL;
CREATE INDEX events_recipient_idx ON events (recipient, block_height) WHERE recipient IS NOT NULL;
CREATE INDEX events_locked_address_idx ON events (locked_address, block_height) WHERE locked_address IS NOT NULL;

CREATE TABLE smart_contracts (
  contract_id text COLLATE "C" NOT NULL,
  tx_id text COLLATE "C" NOT NULL,
  index_block_hash text COLLATE "C" NOT NULL,
  microblock_hash text COLLATE "C" NOT NULL,
  block_height integer NOT NULL,
  clarity_version smallint,
  abi jsonb,
  canonical boolean NOT NULL,
  microblock_canonical boolean NOT NULL,
  PRIMARY KEY (contract_id, tx_id, index_block_hash, microblock_hash)
);
CREATE INDEX smart_contracts_block_idx ON smart_contracts (index_block_hash);

CREATE TABLE miner_rewards (
  -- the block whose payload announced the matured reward
  index_block_hash text COLLATE "C" NOT NULL,
  mature_block_height integer NOT NULL,
  from_index_consensus_hash text COLLATE "C" NOT NULL,
  from_stacks_block_hash text COLLATE "C" NOT NULL,
  recipient text COLLATE "C" NOT NULL,
  miner_address text COLLATE "C",
  coinbase_amount numeric NOT NULL,
  tx_fees_anchored numeric NOT NULL,
  tx_fees_streamed_confirmed numeric NOT NULL,
  tx_fees_streamed_produced numeric NOT NULL,
  canonical boolean NOT NULL
);
CREATE INDEX miner_rewards_block_idx ON miner_rewards (index_block_hash);
CREATE INDEX miner_rewards_recipient_idx ON miner_rewards (recipient, mature_block_height);

-- Transactions received by the node and not (yet) mined, or pruned from the pool with a status.
-- status: 0 pending, -10 dropped_replace_by_fee, -11 dropped_replace_across_fork, -12 dropped_too_expensive,
--         -13 dropped_stale_garbage_collect, -14 dropped by our own garbage collection, -15 dropped_problematic
CREATE TABLE mempool_txs (
  tx_id text COLLATE "C" PRIMARY KEY,
  pruned boolean NOT NULL,
  status smallint NOT NULL,
  replaced_by_tx_id text COLLATE "C",
  receipt_time bigint NOT NULL,
  receipt_block_height integer NOT NULL,
  type_id smallint NOT NULL,
  nonce bigint NOT NULL,
  fee_rate numeric NOT NULL,
  sender_address text COLLATE "C" NOT NULL,
  sponsored boolean NOT NULL,
  sponsor_address text COLLATE "C",
  sponsor_nonce bigint,
  anchor_mode smallint NOT NULL,
  post_condition_mode smallint NOT NULL,
  post_conditions jsonb NOT NULL,
  payload jsonb NOT NULL,
  token_transfer_recipient text COLLATE "C",
  token_transfer_amount numeric,
  contract_call_contract_id text COLLATE "C",
  smart_contract_contract_id text COLLATE "C",
  raw_tx text NOT NULL,
  tx_size integer NOT NULL
);
CREATE INDEX mempool_sender_nonce_idx ON mempool_txs (sender_address, nonce) WHERE NOT pruned;
CREATE INDEX mempool_sponsor_nonce_idx ON mempool_txs (sponsor_address, sponsor_nonce)
  WHERE NOT pruned AND sponsored;
CREATE INDEX mempool_recipient_idx ON mempool_txs (token_transfer_recipient) WHERE NOT pruned;
CREATE INDEX mempool_contract_deploy_idx ON mempool_txs (smart_contract_contract_id, nonce)
  WHERE NOT pruned AND smart_contract_contract_id IS NOT NULL;
CREATE INDEX mempool_type_fee_idx ON mempool_txs (type_id, fee_rate) WHERE NOT pruned;
CREATE INDEX mempool_receipt_height_idx ON mempool_txs (receipt_block_height) WHERE NOT pruned;

-- Per-principal transaction index: one row per (principal, tx) the principal takes part in, as sender,
-- token-transfer recipient, called or deployed contract, or party of an stx/ft/nft event.
-- `ordinal` numbers a principal's canonical anchored txs 1..n in chain order, so a page at any offset is
-- an index seek; it is null while a row is not canonical or sits in an unconfirmed microblock.
CREATE TABLE principal_txs (
  principal text COLLATE "C" NOT NULL,
  tx_id text COLLATE "C" NOT NULL,
  index_block_hash text COLLATE "C" NOT NULL,
  microblock_hash text COLLATE "C" NOT NULL,
  block_height integer NOT NULL,
  microblock_sequence integer NOT NULL,
  tx_index integer NOT NULL,
  canonical boolean NOT NULL,
  microblock_canonical boolean NOT NULL,
  ordinal bigint,
  PRIMARY KEY (principal, tx_id, index_block_hash, microblock_hash)
);
CREATE UNIQUE INDEX principal_txs_ordinal_idx ON principal_txs (principal, ordinal) WHERE ordinal IS NOT NULL;
CREATE INDEX principal_txs_height_idx ON principal_txs (principal, block_height)
  WHERE canonical AND microblock_canonical;
CREATE INDEX principal_txs_block_idx ON principal_txs (index_block_hash);

-- Running totals over the canonical anchored chain, maintained by ingest and corrected on reorg.
CREATE TABLE principal_stats (
  principal text COLLATE "C" PRIMARY KEY,
  tx_count bigint NOT NULL DEFAULT 0
);

CREATE TABLE stx_balances (
  principal text COLLATE "C" PRIMARY KEY,
  total_sent numeric NOT NULL DEFAULT 0,
  total_received numeric NOT NULL DEFAULT 0,
  total_fees_sent numeric NOT NULL DEFAULT 0,
  total_miner_rewards_received numeric NOT NULL DEFAULT 0
);

CREATE TABLE ft_balances (
  principal text COLLATE "C" NOT NULL,
  asset_identifier text COLLATE "C" NOT NULL,
  total_sent numeric NOT NULL DEFAULT 0,
  total_received numeric NOT NULL DEFAULT 0,
  PRIMARY KEY (principal, asset_identifier)
);

CREATE TABLE nft_balances (
  principal text COLLATE "C" NOT NULL,
  asset_identifier text COLLATE "C" NOT NULL,
  sent_count bigint NOT NULL DEFAULT 0,
  received_count bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (principal, asset_identifier)
);

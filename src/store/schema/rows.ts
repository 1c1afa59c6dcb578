// Row shapes of the tables ingest writes; column names as in the schema (migrations/001_schema.sql).

export interface BlockRow {
  index_block_hash: string;
  block_hash: string;
  block_height: number;
  parent_index_block_hash: string;
  parent_block_hash: string;
  parent_microblock_hash: string;
  parent_microblock_sequence: number;
  burn_block_hash: string;
  burn_block_height: number;
  burn_block_time: number;
  parent_burn_block_time: number;
  block_time: number;
  miner_txid: string;
  tenure_height: number | null;
  signer_bitvec: string | null;
  tx_count: number;
  execution_cost_read_count: number;
  execution_cost_read_length: number;
  execution_cost_runtime: number;
  execution_cost_write_count: number;
  execution_cost_write_length: number;
  canonical: boolean;
  /** content hash of the observer message that brought the block (its raw-log row), null before migration 019 */
  message_hash: string | null;
}

/** The decoded transaction columns shared by `txs` and `mempool_txs`. */
export interface DecodedTxColumns {
  tx_id: string;
  type_id: number;
  nonce: number;
  fee_rate: string;
  sender_address: string;
  sponsored: boolean;
  sponsor_address: string | null;
  sponsor_nonce: number | null;
  anchor_mode: number;
  post_condition_mode: number;
  post_conditions: unknown;
  payload: unknown;
  token_transfer_recipient: string | null;
  token_transfer_amount: string | null;
  contract_call_contract_id: string | null;
  smart_contract_contract_id: string | null;
  raw_tx: string;
  tx_size: number;
}

export interface TxRow extends DecodedTxColumns {
  index_block_hash: string;
  microblock_hash: string;
  block_hash: string;
  block_height: number;
  block_time: number;
  burn_block_time: number;
  burn_block_height: number;
  parent_burn_block_time: number;
  parent_block_hash: string;
  parent_index_block_hash: string;
  tx_index: number;
  microblock_sequence: number;
  canonical: boolean;
  microblock_canonical: boolean;
  status: number;
  raw_result: string;
  result_repr: string;
  vm_error: string | null;
  event_count: number;
  execution_cost_read_count: number;
  execution_cost_read_length: number;
  execution_cost_runtime: number;
  execution_cost_write_count: number;
  execution_cost_write_length: number;
}

export interface MempoolTxRow extends DecodedTxColumns {
  pruned: boolean;
  status: number;
  replaced_by_tx_id: string | null;
  receipt_time: number;
  receipt_block_height: number;
}

export interface EventRow {
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  event_index: number;
  block_height: number;
  tx_index: number;
  microblock_sequence: number;
  canonical: boolean;
  microblock_canonical: boolean;
  kind: number;
  asset_event_type: number | null;
  sender: string | null;
  recipient: string | null;
  amount: string | null;
  asset_identifier: string | null;
  value: string | null;
  value_repr: string | null;
  memo: string | null;
  contract_id: string | null;
  topic: string | null;
  locked_address: string | null;
  unlock_height: number | null;
  /** lock-changing PoX print events: the operation (see migrations/002_accounts.sql) */
  pox_name: string | null;
}

export interface SmartContractRow {
  contract_id: string;
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  block_height: number;
  clarity_version: number | null;
  abi: unknown;
  canonical: boolean;
  microblock_canonical: boolean;
}

export interface MinerRewardRow {
  index_block_hash: string;
  mature_block_height: number;
  from_index_consensus_hash: string;
  from_stacks_block_hash: string;
  recipient: string;
  miner_address: string | null;
  coinbase_amount: string;
  tx_fees_anchored: string;
  tx_fees_streamed_confirmed: string;
  tx_fees_streamed_produced: string;
  canonical: boolean;
}

export interface PrincipalTxRow {
  principal: string;
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  block_height: number;
  microblock_sequence: number;
  tx_index: number;
  canonical: boolean;
  microblock_canonical: boolean;
}

export interface MicroblockRow {
  microblock_hash: string;
  microblock_sequence: number;
  microblock_parent_hash: string;
  parent_index_block_hash: string;
  index_block_hash: string;
  block_height: number;
  burn_block_hash: string;
  burn_block_height: number;
  burn_block_time: number;
  microblock_canonical: boolean;
  received_at: number;
}

/** Everything one block (or one batch of microblocks) adds to the index. */
export interface ChainRows {
  txs: TxRow[];
  events: EventRow[];
  smartContracts: SmartContractRow[];
  principalTxs: PrincipalTxRow[];
}

// Each table's columns, written once: name (in insert order), the SQL type of its bulk-insert parameter,
// nullability, and for jsonb the shape of the value. The row types (schema/rows.ts), the bulk insert specs
// (write/bulk.ts users) and the SELECT lists of the reads (read/txs.ts) are derived from these lists, so a
// new column is the migration, its line here, its value where rows are built (ingest/chain-rows.ts) and its
// rendering. Types and NOT NULL are the migrations' (migrations/001_schema.sql and later).

export type ColumnType = 'text' | 'int2' | 'int4' | 'int8' | 'numeric' | 'bool' | 'jsonb';

/** The JS value of each column type as the store reads and writes it (numeric as a decimal string). */
interface ValueOfType {
  text: string;
  int2: number;
  int4: number;
  int8: number;
  numeric: string;
  bool: boolean;
  jsonb: unknown;
}

/** A column: its type, and its JS value type (a phantom: carried by the type, never set). */
export interface Column<Value = unknown> {
  readonly type: ColumnType;
  readonly value?: Value;
}

type Table = Record<string, Column>;

const column = <T extends ColumnType>(type: T): Column<ValueOfType[T]> => ({ type });
const text = column('text');
const int2 = column('int2');
const int4 = column('int4');
const int8 = column('int8');
const numeric = column('numeric');
const bool = column('bool');
const json = <V>(): Column<V> => ({ type: 'jsonb' });
const nullable = <V>(c: Column<V>): Column<V | null> => c;

/** The row type of a table's columns. */
export type RowOf<T extends Table> = { -readonly [K in keyof T]: T[K] extends Column<infer V> ? V : never };

/** A table's columns for bulk insert, in insert order. */
export type ColumnSpec<Row> = readonly (readonly [keyof Row & string, ColumnType])[];

/** The bulk insert spec of a table's columns. */
export function columnSpec<T extends Table>(columns: T): ColumnSpec<RowOf<T>> {
  return Object.entries(columns).map(([name, c]) => [name as keyof RowOf<T> & string, c.type] as const);
}

export const blockColumns = {
  index_block_hash: text,
  block_hash: text,
  block_height: int4,
  parent_index_block_hash: text,
  parent_block_hash: text,
  parent_microblock_hash: text,
  parent_microblock_sequence: int4,
  burn_block_hash: text,
  burn_block_height: int4,
  burn_block_time: int8,
  parent_burn_block_time: int8,
  block_time: int8,
  miner_txid: text,
  tenure_height: nullable(int4),
  signer_bitvec: nullable(text),
  tx_count: int4,
  execution_cost_read_count: int8,
  execution_cost_read_length: int8,
  execution_cost_runtime: int8,
  execution_cost_write_count: int8,
  execution_cost_write_length: int8,
  canonical: bool,
  /** content hash of the observer message that brought the block (its raw-log row), null before migration 019 */
  message_hash: nullable(text),
  /** the ids of the txs mined in the block, newest first, as JSON array text (migration 023; write/blocks.ts) */
  tx_ids_json: text,
} as const;

/** The decoded transaction columns `txs` and `mempool_txs` share. */
export const decodedTxColumns = {
  tx_id: text,
  type_id: int2,
  nonce: int8,
  fee_rate: numeric,
  sender_address: text,
  sponsored: bool,
  sponsor_address: nullable(text),
  sponsor_nonce: nullable(int8),
  anchor_mode: int2,
  post_condition_mode: int2,
  post_conditions: json<unknown[]>(),
  payload: json<Record<string, unknown>>(),
  token_transfer_recipient: nullable(text),
  token_transfer_amount: nullable(numeric),
  contract_call_contract_id: nullable(text),
  smart_contract_contract_id: nullable(text),
  raw_tx: text,
  tx_size: int4,
} as const;

export const txColumns = {
  ...decodedTxColumns,
  index_block_hash: text,
  microblock_hash: text,
  block_hash: text,
  block_height: int4,
  block_time: int8,
  burn_block_time: int8,
  burn_block_height: int4,
  parent_burn_block_time: int8,
  parent_block_hash: text,
  parent_index_block_hash: text,
  tx_index: int4,
  microblock_sequence: int4,
  canonical: bool,
  microblock_canonical: bool,
  status: int2,
  raw_result: text,
  result_repr: text,
  vm_error: nullable(text),
  event_count: int4,
  execution_cost_read_count: int8,
  execution_cost_read_length: int8,
  execution_cost_runtime: int8,
  execution_cost_write_count: int8,
  execution_cost_write_length: int8,
} as const;

export const mempoolTxColumns = {
  ...decodedTxColumns,
  pruned: bool,
  status: int2,
  replaced_by_tx_id: nullable(text),
  receipt_time: int8,
  receipt_block_height: int4,
} as const;

export const eventColumns = {
  tx_id: text,
  index_block_hash: text,
  microblock_hash: text,
  event_index: int4,
  block_height: int4,
  tx_index: int4,
  microblock_sequence: int4,
  canonical: bool,
  microblock_canonical: bool,
  kind: int2,
  asset_event_type: nullable(int2),
  sender: nullable(text),
  recipient: nullable(text),
  amount: nullable(numeric),
  asset_identifier: nullable(text),
  value: nullable(text),
  value_repr: nullable(text),
  memo: nullable(text),
  contract_id: nullable(text),
  topic: nullable(text),
  locked_address: nullable(text),
  unlock_height: nullable(int8),
  /** lock-changing PoX print events: the operation (see migrations/002_accounts.sql) */
  pox_name: nullable(text),
} as const;

export const smartContractColumns = {
  contract_id: text,
  tx_id: text,
  index_block_hash: text,
  microblock_hash: text,
  block_height: int4,
  clarity_version: nullable(int2),
  abi: json<unknown>(),
  canonical: bool,
  microblock_canonical: bool,
} as const;

export const principalTxColumns = {
  principal: text,
  tx_id: text,
  index_block_hash: text,
  microblock_hash: text,
  block_height: int4,
  microblock_sequence: int4,
  tx_index: int4,
  canonical: bool,
  microblock_canonical: bool,
} as const;

export const minerRewardColumns = {
  index_block_hash: text,
  mature_block_height: int4,
  from_index_consensus_hash: text,
  from_stacks_block_hash: text,
  recipient: text,
  miner_address: nullable(text),
  coinbase_amount: numeric,
  tx_fees_anchored: numeric,
  tx_fees_streamed_confirmed: numeric,
  tx_fees_streamed_produced: numeric,
  canonical: bool,
} as const;

export const microblockColumns = {
  microblock_hash: text,
  microblock_sequence: int4,
  microblock_parent_hash: text,
  parent_index_block_hash: text,
  index_block_hash: text,
  block_height: int4,
  burn_block_hash: text,
  burn_block_height: int4,
  burn_block_time: int8,
  microblock_canonical: bool,
  received_at: int8,
} as const;

/**
 * Where the chain's tip is: these columns of the one `chain_tip` row, which ingest locks and moves
 * (write/tip.ts) and readers key their ETags on (read/chain-state.ts). The row also holds the mempool version
 * and the PoX unlock heights, each read and written by the statements that need it.
 */
export const chainTipColumns = {
  block_height: int4,
  index_block_hash: text,
  block_hash: text,
  burn_block_height: int4,
  microblock_hash: text,
  microblock_sequence: int4,
} as const;

/**
 * What the chain ending at each block holds (migration 033; write/chain-totals.ts): its blocks, the sum of
 * their `tx_count`, its `txs` rows in all and per transaction type (`<type>_txs`, the types of
 * schema/codes.ts `TX_TYPES`), and the burn block heights above its first block.
 */
export const chainTotalsColumns = {
  index_block_hash: text,
  block_height: int4,
  burn_block_height: int4,
  blocks: int4,
  tx_count: int8,
  tx_rows: int8,
  token_transfer_txs: int8,
  smart_contract_txs: int8,
  contract_call_txs: int8,
  poison_microblock_txs: int8,
  coinbase_txs: int8,
  tenure_change_txs: int8,
  burn_blocks: int4,
} as const;

/** The transactions a principal sponsored and takes no other part in (migration 034; write/sponsor-txs.ts). */
export const sponsorTxColumns = {
  sponsor: text,
  tx_id: text,
  index_block_hash: text,
  microblock_hash: text,
  block_height: int4,
  microblock_sequence: int4,
  tx_index: int4,
  sponsor_ordinal: int8,
  list_ordinal: int8,
} as const;

/** Who holds each NFT, with the event that gave it (migration 035; write/nft-custody.ts). */
export const nftCustodyColumns = {
  asset_identifier: text,
  value: text,
  value_repr: text,
  owner: text,
  tx_id: text,
  index_block_hash: text,
  microblock_hash: text,
  block_height: int4,
  microblock_sequence: int4,
  tx_index: int4,
  event_index: int4,
} as const;

/** The `chain_totals` column counting the txs of one transaction type (a name of schema/codes.ts `TX_TYPES`). */
export const txTypeTotalsColumn = (type: string): keyof typeof chainTotalsColumns =>
  `${type}_txs` as keyof typeof chainTotalsColumns;

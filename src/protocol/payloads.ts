import Type, { type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

// The stacks-node event-observer messages, as far as this indexer reads them. Unknown fields are allowed
// (the node adds fields across versions); missing required ones, and values the index cannot hold (wrong
// type, out of a column's range, over-long), make the message a 400 before anything is written.

/** Hex bytes of any length (two digits a byte: a node writes bytes): raw transactions, Clarity values. */
const Hex = Type.String({ pattern: '^0x(?:[0-9a-fA-F]{2})*$' });
/** A 32-byte hash: block hashes, transaction ids. */
const Hash = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });
/** Heights, indexes and sequences: PostgreSQL `integer` columns. */
const Uint = Type.Integer({ minimum: 0, maximum: 2_147_483_647 });
/** Times and costs: `bigint` columns, within what a JSON number holds exactly. */
const Uint64 = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
/** An amount: a Clarity uint (u128, at most 39 digits) as a decimal string, or a safe JSON integer. */
const Amount = Type.Union([Type.String({ pattern: '^[0-9]{1,39}$' }), Uint64]);
const NumericString = Amount;
/** Principals, asset identifiers, topics: short text (NUL is dropped on insert, as upstream does). */
const Name = Type.String({ minLength: 1, maxLength: 512 });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const ExecutionCost = Type.Object({
  read_count: Uint64,
  read_length: Uint64,
  runtime: Uint64,
  write_count: Uint64,
  write_length: Uint64,
});

type Cost = Static<typeof ExecutionCost>;

/** The total execution cost of some txs (a block's `anchored_cost` when the node leaves it out). */
export function sumExecutionCosts(costs: Iterable<Cost | null | undefined>): Cost {
  const total = { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 };
  for (const cost of costs) {
    if (!cost) continue;
    total.read_count += cost.read_count;
    total.read_length += cost.read_length;
    total.runtime += cost.runtime;
    total.write_count += cost.write_count;
    total.write_length += cost.write_length;
  }
  return total;
}

export const BlockTransaction = Type.Object({
  txid: Hash,
  tx_index: Uint,
  raw_tx: Hex,
  status: Type.String(),
  raw_result: Hex,
  execution_cost: Type.Optional(Nullable(ExecutionCost)),
  microblock_hash: Type.Optional(Nullable(Hash)),
  microblock_sequence: Type.Optional(Nullable(Uint)),
  microblock_parent_hash: Type.Optional(Nullable(Hash)),
  contract_abi: Type.Optional(Type.Unknown()),
  contract_interface: Type.Optional(Type.Unknown()),
  vm_error: Type.Optional(Nullable(Type.String())),
  burnchain_op: Type.Optional(Type.Unknown()),
});
export type BlockTransaction = Static<typeof BlockTransaction>;

export const ChainEvent = Type.Object({
  txid: Hash,
  event_index: Uint64,
  committed: Type.Optional(Type.Boolean()),
  type: Type.String(),
});
export type ChainEvent = Static<typeof ChainEvent> & Record<string, unknown>;

const MinerReward = Type.Object({
  recipient: Name,
  miner_address: Type.Optional(Nullable(Name)),
  coinbase_amount: NumericString,
  tx_fees_anchored: NumericString,
  tx_fees_streamed_confirmed: NumericString,
  tx_fees_streamed_produced: NumericString,
  from_index_consensus_hash: Hex,
  from_stacks_block_hash: Hex,
});

export const NewBlock = Type.Object({
  block_hash: Hash,
  block_height: Uint,
  index_block_hash: Hash,
  parent_index_block_hash: Hash,
  parent_block_hash: Hash,
  parent_microblock: Hash,
  parent_microblock_sequence: Uint,
  burn_block_hash: Hash,
  burn_block_height: Uint,
  burn_block_time: Uint64,
  parent_burn_block_hash: Type.Optional(Hash),
  parent_burn_block_height: Type.Optional(Uint),
  parent_burn_block_timestamp: Type.Optional(Uint64),
  miner_txid: Hash,
  block_time: Type.Optional(Nullable(Uint64)),
  tenure_height: Type.Optional(Nullable(Uint)),
  signer_bitvec: Type.Optional(Nullable(Type.String())),
  anchored_cost: Type.Optional(Nullable(ExecutionCost)),
  pox_v1_unlock_height: Type.Optional(Nullable(Uint)),
  pox_v2_unlock_height: Type.Optional(Nullable(Uint)),
  pox_v3_unlock_height: Type.Optional(Nullable(Uint)),
  pox_v4_unlock_height: Type.Optional(Nullable(Uint)),
  matured_miner_rewards: Type.Optional(Type.Array(MinerReward)),
  transactions: Type.Array(BlockTransaction),
  events: Type.Array(ChainEvent),
});
export type NewBlock = Static<typeof NewBlock>;

export const NewBurnBlock = Type.Object({
  burn_block_hash: Hash,
  burn_block_height: Uint,
  burn_amount: Type.Optional(NumericString),
  reward_recipients: Type.Optional(Type.Array(Type.Object({ recipient: Name, amt: Amount }))),
  reward_slot_holders: Type.Optional(Type.Array(Name)),
});
export type NewBurnBlock = Static<typeof NewBurnBlock>;

export const NewMicroblocks = Type.Object({
  parent_index_block_hash: Hash,
  burn_block_hash: Hash,
  burn_block_height: Uint,
  burn_block_timestamp: Uint64,
  transactions: Type.Array(
    Type.Object({
      ...BlockTransaction.properties,
      microblock_hash: Hash,
      microblock_sequence: Uint,
      microblock_parent_hash: Hash,
    }),
  ),
  events: Type.Array(ChainEvent),
});
export type NewMicroblocks = Static<typeof NewMicroblocks>;

export const NewMempoolTx = Type.Array(Hex);
export type NewMempoolTx = Static<typeof NewMempoolTx>;

export const DropMempoolTx = Type.Object({
  dropped_txids: Type.Array(Hash),
  reason: Type.String(),
  new_txid: Type.Optional(Nullable(Hash)),
});
export type DropMempoolTx = Static<typeof DropMempoolTx>;

/** A Clarity value as hex (some node versions leave out the `0x`). */
const ClarityHex = Type.String({ pattern: '^(0x)?[0-9a-fA-F]*$' });
/** A burn height, as a decimal string or a number. */
const Height = Type.Union([Type.String({ pattern: '^[0-9]{1,15}$' }), Uint64]);
const Memo = Type.Optional(Nullable(Type.String({ pattern: '^(0x)?[0-9a-fA-F]*$' })));

/** The type-specific body (`event[event.type]`) of each event type the index keeps. */
const EventBodies = {
  stx_transfer_event: Type.Object({ sender: Name, recipient: Name, amount: Amount, memo: Memo }),
  stx_mint_event: Type.Object({ recipient: Name, amount: Amount }),
  stx_burn_event: Type.Object({ sender: Name, amount: Amount }),
  stx_lock_event: Type.Object({
    locked_amount: Amount,
    unlock_height: Height,
    locked_address: Name,
    contract_identifier: Type.Optional(Nullable(Name)),
  }),
  ft_transfer_event: Type.Object({ asset_identifier: Name, sender: Name, recipient: Name, amount: Amount }),
  ft_mint_event: Type.Object({ asset_identifier: Name, recipient: Name, amount: Amount }),
  ft_burn_event: Type.Object({ asset_identifier: Name, sender: Name, amount: Amount }),
  nft_transfer_event: Type.Object({
    asset_identifier: Name,
    sender: Name,
    recipient: Name,
    raw_value: ClarityHex,
  }),
  nft_mint_event: Type.Object({ asset_identifier: Name, recipient: Name, raw_value: ClarityHex }),
  nft_burn_event: Type.Object({ asset_identifier: Name, sender: Name, raw_value: ClarityHex }),
  contract_event: Type.Object({
    contract_identifier: Name,
    topic: Type.String({ maxLength: 512 }),
    raw_value: ClarityHex,
  }),
};
export type IndexedEventType = keyof typeof EventBodies;

export const eventBodyValidators = Object.fromEntries(
  Object.entries(EventBodies).map(([type, schema]) => [type, Compile(schema)]),
) as Record<IndexedEventType, ReturnType<typeof Compile>>;

export function isIndexedEventType(type: string): type is IndexedEventType {
  return Object.hasOwn(eventBodyValidators, type);
}

/**
 * Messages kept in the raw log only. The node sends every path of stacks-core's event dispatcher
 * (`PATH_*` in stacks-node's event_dispatcher.rs) that an observer's `events_keys` subscribe to, and re-sends
 * each until it gets a 200: the miner's own paths (`mined_*`, for the `mined_blocks` and `mined_microblocks`
 * keys) are taken too, so that no subscription stalls the node.
 */
const RawOnly = Type.Unknown();

export const payloadValidators = {
  '/new_block': Compile(NewBlock),
  '/new_burn_block': Compile(NewBurnBlock),
  '/new_microblocks': Compile(NewMicroblocks),
  '/new_mempool_tx': Compile(NewMempoolTx),
  '/drop_mempool_tx': Compile(DropMempoolTx),
  '/attachments/new': Compile(RawOnly),
  '/stackerdb_chunks': Compile(RawOnly),
  '/proposal_response': Compile(RawOnly),
  '/mined_block': Compile(RawOnly),
  '/mined_microblock': Compile(RawOnly),
  '/mined_nakamoto_block': Compile(RawOnly),
} as const;

export type ObserverPath = keyof typeof payloadValidators;
export const observerPaths = Object.keys(payloadValidators) as ObserverPath[];

export function isObserverPath(path: string): path is ObserverPath {
  return Object.hasOwn(payloadValidators, path);
}

import Type, { type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

// The stacks-node event-observer messages, as far as this indexer reads them. Unknown fields are allowed
// (the node adds fields across versions); missing required ones make the message a 400.

const Hash = Type.String({ pattern: '^0x[0-9a-fA-F]*$' });
const Uint = Type.Integer({ minimum: 0 });
const NumericString = Type.Union([Type.String({ pattern: '^[0-9]+$' }), Uint]);
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const ExecutionCost = Type.Object({
  read_count: Uint,
  read_length: Uint,
  runtime: Uint,
  write_count: Uint,
  write_length: Uint,
});

export const BlockTransaction = Type.Object({
  txid: Hash,
  tx_index: Uint,
  raw_tx: Hash,
  status: Type.String(),
  raw_result: Hash,
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
  event_index: Uint,
  committed: Type.Optional(Type.Boolean()),
  type: Type.String(),
});
export type ChainEvent = Static<typeof ChainEvent> & Record<string, unknown>;

const MinerReward = Type.Object({
  recipient: Type.String(),
  miner_address: Type.Optional(Nullable(Type.String())),
  coinbase_amount: NumericString,
  tx_fees_anchored: NumericString,
  tx_fees_streamed_confirmed: NumericString,
  tx_fees_streamed_produced: NumericString,
  from_index_consensus_hash: Type.String(),
  from_stacks_block_hash: Type.String(),
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
  burn_block_time: Uint,
  parent_burn_block_timestamp: Type.Optional(Uint),
  miner_txid: Hash,
  block_time: Type.Optional(Nullable(Uint)),
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
  reward_recipients: Type.Optional(Type.Array(Type.Unknown())),
  reward_slot_holders: Type.Optional(Type.Array(Type.Unknown())),
});
export type NewBurnBlock = Static<typeof NewBurnBlock>;

export const NewMicroblocks = Type.Object({
  parent_index_block_hash: Hash,
  burn_block_hash: Hash,
  burn_block_height: Uint,
  burn_block_timestamp: Uint,
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

export const NewMempoolTx = Type.Array(Hash);
export type NewMempoolTx = Static<typeof NewMempoolTx>;

export const DropMempoolTx = Type.Object({
  dropped_txids: Type.Array(Hash),
  reason: Type.String(),
  new_txid: Type.Optional(Nullable(Hash)),
});
export type DropMempoolTx = Static<typeof DropMempoolTx>;

/** Messages kept in the raw log only. */
export const RawOnly = Type.Unknown();

export const payloadValidators = {
  '/new_block': Compile(NewBlock),
  '/new_burn_block': Compile(NewBurnBlock),
  '/new_microblocks': Compile(NewMicroblocks),
  '/new_mempool_tx': Compile(NewMempoolTx),
  '/drop_mempool_tx': Compile(DropMempoolTx),
  '/attachments/new': Compile(RawOnly),
  '/stackerdb_chunks': Compile(RawOnly),
  '/proposal_response': Compile(RawOnly),
} as const;

export type ObserverPath = keyof typeof payloadValidators;
export const observerPaths = Object.keys(payloadValidators) as ObserverPath[];

export function isObserverPath(path: string): path is ObserverPath {
  return Object.hasOwn(payloadValidators, path);
}

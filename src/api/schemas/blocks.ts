import Type, { type Static } from 'typebox';

const executionCosts = {
  execution_cost_read_count: Type.Integer(),
  execution_cost_read_length: Type.Integer(),
  execution_cost_runtime: Type.Integer(),
  execution_cost_write_count: Type.Integer(),
  execution_cost_write_length: Type.Integer(),
};

// BlockV2 and BlockV1 share most fields but are two answers, each written whole in upstream's key order (the
// serializer writes a schema's keys in its order): v2's own fields, parent_index_block_hash and tx_count,
// stand amid the shared ones. Their renderings differ too: v1's block_time falls back to the burn block
// time, v2's does not (render/blocks.ts).
export const BlockV2 = Type.Object(
  {
    canonical: Type.Boolean(),
    height: Type.Integer(),
    hash: Type.String(),
    block_time: Type.Integer(),
    block_time_iso: Type.String(),
    tenure_height: Type.Integer(),
    index_block_hash: Type.String(),
    parent_block_hash: Type.String(),
    parent_index_block_hash: Type.String(),
    burn_block_time: Type.Integer(),
    burn_block_time_iso: Type.String(),
    burn_block_hash: Type.String(),
    burn_block_height: Type.Integer(),
    miner_txid: Type.String(),
    tx_count: Type.Integer(),
    ...executionCosts,
  },
  { title: 'BlockV2', description: 'A Stacks block' },
);
export type BlockV2 = Static<typeof BlockV2>;

export const BlockV1 = Type.Object(
  {
    canonical: Type.Boolean(),
    height: Type.Integer(),
    hash: Type.String(),
    block_time: Type.Integer(),
    block_time_iso: Type.String(),
    tenure_height: Type.Integer(),
    index_block_hash: Type.String(),
    parent_block_hash: Type.String(),
    burn_block_time: Type.Integer(),
    burn_block_time_iso: Type.String(),
    burn_block_hash: Type.String(),
    burn_block_height: Type.Integer(),
    miner_txid: Type.String(),
    ...executionCosts,
    txs: Type.Array(Type.String(), { description: 'ids of the block’s transactions, newest first' }),
    parent_microblock_hash: Type.String(),
    parent_microblock_sequence: Type.Integer(),
    microblocks_accepted: Type.Array(Type.String()),
    microblocks_streamed: Type.Array(Type.String()),
    microblock_tx_count: Type.Record(Type.String(), Type.Integer()),
  },
  { title: 'BlockV1', description: 'A Stacks block, version 1 shape' },
);
export type BlockV1 = Static<typeof BlockV1>;

// Upstream's key order (its response schema's, which its serializer follows).
export const Microblock = Type.Object(
  {
    canonical: Type.Boolean({
      description: 'the block that confirmed (or orphaned) it is canonical; true before any block did',
    }),
    microblock_canonical: Type.Boolean({ description: 'on the stream its confirming block accepted' }),
    microblock_hash: Type.String(),
    microblock_sequence: Type.Integer({ description: 'its place in the stream, from 0' }),
    microblock_parent_hash: Type.String({ description: 'the microblock before it in the stream' }),
    block_height: Type.Integer({ description: 'the height of the block that confirms it' }),
    parent_block_height: Type.Integer({ description: 'the height of the block the stream builds on' }),
    parent_block_hash: Type.String({ description: 'the hash of the block the stream builds on' }),
    parent_burn_block_hash: Type.String({ description: 'the burn block of the block the stream builds on' }),
    parent_burn_block_time: Type.Integer(),
    parent_burn_block_time_iso: Type.String({ description: '"" when the time is 0' }),
    parent_burn_block_height: Type.Integer(),
    block_hash: Type.String({
      description:
        'the block that confirmed it, or orphaned it confirming another part of its stream; "0x" before any block did',
    }),
    txs: Type.Array(Type.String(), { description: 'ids of its canonical transactions, the last first' }),
  },
  { title: 'Microblock', description: 'A microblock (epoch 2.x)' },
);
export type Microblock = Static<typeof Microblock>;

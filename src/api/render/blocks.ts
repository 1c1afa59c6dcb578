import type { BlockRecord, BlockWithTxs } from '../../store/read/blocks.js';
import type { BlockV1, BlockV2 } from '../schemas/blocks.js';
import { isoTime } from './time.js';

// Block rows → the v2 and v1 block objects (contract 2.7, 2.8).

/** Upstream: a tenure height is stored for Nakamoto blocks; older blocks count as their own tenure. */
function tenureHeight(block: BlockRecord): number {
  if (block.tenure_height !== null) return block.tenure_height;
  return block.signer_bitvec !== null ? -1 : block.block_height;
}

export function blockV2(block: BlockRecord): BlockV2 {
  return {
    canonical: block.canonical,
    height: block.block_height,
    hash: block.block_hash,
    block_time: block.block_time,
    block_time_iso: isoTime(block.block_time),
    tenure_height: tenureHeight(block),
    index_block_hash: block.index_block_hash,
    parent_block_hash: block.parent_block_hash,
    parent_index_block_hash: block.parent_index_block_hash,
    burn_block_time: block.burn_block_time,
    burn_block_time_iso: isoTime(block.burn_block_time),
    burn_block_hash: block.burn_block_hash,
    burn_block_height: block.burn_block_height,
    miner_txid: block.miner_txid,
    tx_count: block.tx_count,
    execution_cost_read_count: block.execution_cost_read_count,
    execution_cost_read_length: block.execution_cost_read_length,
    execution_cost_runtime: block.execution_cost_runtime,
    execution_cost_write_count: block.execution_cost_write_count,
    execution_cost_write_length: block.execution_cost_write_length,
  };
}

const ZERO_HASH = '0x' + '0'.repeat(64);

/** The v1 block (contract 2.8). Built as one literal: object rest/spread made it ~500x slower in V8. */
export function blockV1(block: BlockWithTxs): BlockV1 {
  const parentMicroblockIsNone = block.parent_microblock_hash === ZERO_HASH;
  const blockTime = block.block_time > 0 ? block.block_time : block.burn_block_time;
  return {
    canonical: block.canonical,
    height: block.block_height,
    hash: block.block_hash,
    block_time: blockTime,
    block_time_iso: isoTime(blockTime),
    tenure_height: tenureHeight(block),
    index_block_hash: block.index_block_hash,
    parent_block_hash: block.parent_block_hash,
    burn_block_time: block.burn_block_time,
    burn_block_time_iso: isoTime(block.burn_block_time),
    burn_block_hash: block.burn_block_hash,
    burn_block_height: block.burn_block_height,
    miner_txid: block.miner_txid,
    execution_cost_read_count: block.execution_cost_read_count,
    execution_cost_read_length: block.execution_cost_read_length,
    execution_cost_runtime: block.execution_cost_runtime,
    execution_cost_write_count: block.execution_cost_write_count,
    execution_cost_write_length: block.execution_cost_write_length,
    txs: block.txs,
    parent_microblock_hash: parentMicroblockIsNone ? '' : block.parent_microblock_hash || '0x',
    parent_microblock_sequence: parentMicroblockIsNone ? -1 : block.parent_microblock_sequence,
    microblocks_accepted: block.microblocks_accepted,
    microblocks_streamed: block.microblocks_streamed,
    microblock_tx_count: block.microblock_tx_count,
  };
}

import type { BlockRecord, BlockWithTxs } from '../../store/read/blocks.js';
import type { MicroblockRecord } from '../../store/read/microblocks.js';
import { BlockV1, type BlockV2, type Microblock } from '../schemas/blocks.js';
import { serializerOf } from './serializer.js';
import { isoTime } from './time.js';

// Block rows → the v2 and v1 block objects (contract 2.7, 2.8), and the microblock.

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

/**
 * The v1 block (contract 2.8), its `txs` left empty: `blockV1Body` splices in the list stored with the block.
 * Built as one literal: object rest/spread made it ~500x slower in V8.
 */
function blockV1WithoutTxs(block: BlockWithTxs): BlockV1 {
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
    txs: [],
    parent_microblock_hash: parentMicroblockIsNone ? '' : block.parent_microblock_hash || '0x',
    parent_microblock_sequence: parentMicroblockIsNone ? -1 : block.parent_microblock_sequence,
    microblocks_accepted: block.microblocks_accepted,
    microblocks_streamed: block.microblocks_streamed,
    microblock_tx_count: block.microblock_tx_count,
  };
}

const writeBlockV1 = serializerOf(BlockV1);
const EMPTY_TXS = '"txs":[]';
const TXS_KEY = '"txs":';

/**
 * The v1 block as the bytes of its JSON text: the BlockV1 schema's compiled serializer writes the
 * block with no txs, and the tx-id list, stored with the block as JSON text, is put in its place. Parsing the list
 * (~200 ids) to have the serializer write it back out again cost PostgreSQL's array text parse in the client
 * and the serializer's per-string escape checks. `"txs":[]` appears once: in a string value its quotes would
 * be escaped. test/api/block-by-burn-height.test.ts proves the bytes are what the serializer makes of the
 * block with its txs parsed.
 *
 * Bytes, written once, rather than the joined string: a ~15 KB string answer was copied twice more on the
 * JS heap on its way out (Fastify's `Buffer.byteLength` flattens the joined string, Node's http prefixes the
 * head and the socket write flattens that again) and then encoded to UTF-8 in the write, and a cached answer
 * was copied once more into a Buffer. On the 1M chain, interleaved with main: ~20% fewer scavenges a request,
 * mark-compacts unchanged, API CPU 157 -> 150 µs a request (medians; bench finding F-api-answer-bytes). An
 * earlier Buffer answer differed: it received the list as raw bytes, and tripled the mark-compacts.
 */
export function blockV1Body(block: BlockWithTxs): Buffer {
  const json = writeBlockV1(blockV1WithoutTxs(block));
  const at = json.indexOf(EMPTY_TXS);
  if (at < 0) throw new Error('the v1 block serializer wrote no empty "txs" list');
  const head = json.slice(0, at + TXS_KEY.length);
  const tail = json.slice(at + EMPTY_TXS.length);
  const headBytes = Buffer.byteLength(head);
  const txsBytes = Buffer.byteLength(block.txs_json);
  const body = Buffer.allocUnsafe(headBytes + txsBytes + Buffer.byteLength(tail));
  body.write(head, 0);
  body.write(block.txs_json, headBytes);
  body.write(tail, headBytes + txsBytes);
  return body;
}

/**
 * A hash the original keeps as bytes and writes as `0x` + hex: an empty one (a microblock no block confirmed
 * yet, a parent not indexed) is `0x`.
 */
const hashOrEmpty = (hash: string) => hash || '0x';

export function microblockV1(microblock: MicroblockRecord): Microblock {
  const time = microblock.parent_burn_block_time;
  return {
    canonical: microblock.canonical,
    microblock_canonical: microblock.microblock_canonical,
    microblock_hash: microblock.microblock_hash,
    microblock_sequence: microblock.microblock_sequence,
    microblock_parent_hash: microblock.microblock_parent_hash,
    block_height: microblock.block_height,
    parent_block_height: microblock.parent_block_height,
    parent_block_hash: hashOrEmpty(microblock.parent_block_hash),
    parent_burn_block_hash: microblock.parent_burn_block_hash,
    parent_burn_block_time: time,
    // upstream writes no time for 0 (a parent burn block time unknown)
    parent_burn_block_time_iso: time > 0 ? isoTime(time) : '',
    parent_burn_block_height: microblock.parent_burn_block_height,
    block_hash: hashOrEmpty(microblock.block_hash),
    txs: microblock.txs,
  };
}

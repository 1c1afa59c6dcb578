import type { BlockRow, ChainRows, MicroblockRow, MinerRewardRow } from '../store/schema/rows.js';
import { encodeChainRows, type EncodedChainRows } from '../store/write/blocks.js';
import { buildChainRows, logSkippedEvents, type ContainingBlock, type SkippedEvents } from './chain-rows.js';
import type { ApplyContext, DecodedBlock } from './context.js';
import { checkBlockMessage } from './message-checks.js';
import { sumExecutionCosts, type NewBlock } from '../protocol/payloads.js';

// A `/new_block` message turned into the rows it adds: the block's own row, its miner rewards, the
// microblocks it confirms, and its transactions' rows (chain-rows.ts), placed as the block is (canonical or
// not). Nothing here reads the database: a replay decodes the next block while the database applies the
// current one (`decodeBlock`).

export function blockRow(msg: NewBlock, canonical: boolean, messageHash: string | null): BlockRow {
  const cost = msg.anchored_cost ?? sumExecutionCosts(msg.transactions.map((tx) => tx.execution_cost));
  return {
    index_block_hash: msg.index_block_hash,
    block_hash: msg.block_hash,
    block_height: msg.block_height,
    parent_index_block_hash: msg.parent_index_block_hash,
    parent_block_hash: msg.parent_block_hash,
    parent_microblock_hash: msg.parent_microblock,
    parent_microblock_sequence: msg.parent_microblock_sequence,
    burn_block_hash: msg.burn_block_hash,
    burn_block_height: msg.burn_block_height,
    burn_block_time: msg.burn_block_time,
    parent_burn_block_time: msg.parent_burn_block_timestamp ?? 0,
    block_time: msg.block_time ?? msg.burn_block_time,
    miner_txid: msg.miner_txid,
    tenure_height: msg.tenure_height ?? null,
    signer_bitvec: msg.signer_bitvec ?? null,
    tx_count: msg.transactions.length,
    execution_cost_read_count: cost.read_count,
    execution_cost_read_length: cost.read_length,
    execution_cost_runtime: cost.runtime,
    execution_cost_write_count: cost.write_count,
    execution_cost_write_length: cost.write_length,
    canonical,
    message_hash: messageHash,
    // set once the block's rows are placed (apply-block.ts `storeBlockRows`)
    tx_ids_json: '[]',
  };
}

export function minerRewardRows(msg: NewBlock, canonical: boolean): MinerRewardRow[] {
  return (msg.matured_miner_rewards ?? []).map((r) => ({
    index_block_hash: msg.index_block_hash,
    mature_block_height: msg.block_height,
    from_index_consensus_hash: r.from_index_consensus_hash,
    from_stacks_block_hash: r.from_stacks_block_hash,
    recipient: r.recipient,
    miner_address: r.miner_address ?? null,
    coinbase_amount: String(r.coinbase_amount),
    tx_fees_anchored: String(r.tx_fees_anchored),
    tx_fees_streamed_confirmed: String(r.tx_fees_streamed_confirmed),
    tx_fees_streamed_produced: String(r.tx_fees_streamed_produced),
    canonical,
  }));
}

/** The microblocks whose txs the block message carries (the parent's stream it confirms). */
export function microblockHashesOf(msg: NewBlock): string[] {
  return [...new Set(msg.transactions.flatMap((tx) => (tx.microblock_hash ? [tx.microblock_hash] : [])))];
}

/**
 * Microblocks whose txs this block confirms, as first seen in the block (they may never have been streamed).
 * Their burn block is the parent's, as `/new_microblocks` names it for a streamed one: the block message's
 * `parent_burn_block_*` (upstream's too). A message without them (older nodes) leaves it unknown ('', -1, 0),
 * and the microblock read takes the parent block's (store/read/microblocks.ts).
 */
export function confirmedMicroblockRows(msg: NewBlock, receivedAt: number): MicroblockRow[] {
  const seen = new Map<string, MicroblockRow>();
  for (const tx of msg.transactions) {
    if (!tx.microblock_hash || seen.has(tx.microblock_hash)) continue;
    seen.set(tx.microblock_hash, {
      microblock_hash: tx.microblock_hash,
      microblock_sequence: tx.microblock_sequence ?? 0,
      microblock_parent_hash: tx.microblock_parent_hash ?? '',
      parent_index_block_hash: msg.parent_index_block_hash,
      index_block_hash: msg.index_block_hash,
      block_height: msg.block_height,
      burn_block_hash: msg.parent_burn_block_hash ?? '',
      burn_block_height: msg.parent_burn_block_height ?? -1,
      burn_block_time: msg.parent_burn_block_timestamp ?? 0,
      microblock_canonical: true,
      received_at: receivedAt,
    });
  }
  return [...seen.values()];
}

function containingBlockOf(block: BlockRow): ContainingBlock {
  return {
    index_block_hash: block.index_block_hash,
    block_hash: block.block_hash,
    block_height: block.block_height,
    block_time: block.block_time,
    burn_block_time: block.burn_block_time,
    burn_block_height: block.burn_block_height,
    parent_burn_block_time: block.parent_burn_block_time,
    parent_block_hash: block.parent_block_hash,
    parent_index_block_hash: block.parent_index_block_hash,
    canonical: block.canonical,
  };
}

/**
 * Decodes a block's rows as if it were canonical, outside any database transaction: a replay does this for
 * the next message while the database applies the previous one. A decoding error is kept, to be thrown
 * where apply-block.ts builds the rows (a block already known is not decoded at all, so its error never shows).
 */
export function decodeBlock(msg: NewBlock, isMainnet: boolean, rowsPerStatement?: number): DecodedBlock {
  const skipped: SkippedEvents = new Map();
  try {
    const rawTxBytes = checkBlockMessage(msg);
    const block = containingBlockOf(blockRow(msg, true, null));
    const rows = buildChainRows(msg.transactions, msg.events, block, isMainnet, skipped, rawTxBytes);
    const encoded = rowsPerStatement === undefined ? undefined : encodeChainRows(rows, rowsPerStatement);
    return { payload: msg, rows, encoded, skipped };
  } catch (error) {
    return { payload: msg, error };
  }
}

/**
 * The block's rows, and their statements' literals if built ahead: decoded ahead (`decodeBlock`) when they
 * were, else now. (`ctx.readBackRows`, the test switch of the other paths, also builds every literal here,
 * from the rows: test/ingest/block-paths.test.ts proves both give the same index.)
 */
export function blockChainRows(
  msg: NewBlock,
  block: BlockRow,
  ctx: ApplyContext,
): { rows: ChainRows; encoded?: EncodedChainRows } {
  const decoded = ctx.decoded?.payload === msg ? ctx.decoded : decodeBlock(msg, ctx.isMainnet);
  if (!decoded.rows) throw decoded.error;
  if (decoded.skipped) logSkippedEvents(decoded.skipped, ctx.logger, { block_height: msg.block_height });
  // decoded as canonical; set as the block is (every time: the rows are the message's, whatever ran before)
  const rows = decoded.rows;
  for (const list of [rows.txs, rows.events, rows.smartContracts, rows.principalTxs]) {
    for (const row of list) row.canonical = block.canonical;
  }
  return { rows, encoded: ctx.readBackRows ? undefined : decoded.encoded };
}

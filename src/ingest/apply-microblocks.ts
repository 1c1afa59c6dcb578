import type { TransactionSql } from '../store/db.js';
import { insertChainRows } from '../store/write/blocks.js';
import { pruneMinedTxs, restoreToMempool } from '../store/write/mempool.js';
import {
  getMicroblock,
  insertMicroblocks,
  orphanMicroblocks,
  unconfirmedMicroblocks,
} from '../store/write/microblocks.js';
import type { ChainTip } from '../store/schema/rows.js';
import { lockChainTip, setChainTipMicroblock, touchMempool } from '../store/write/tip.js';
import { buildChainRows, logSkippedEvents, type SkippedEvents } from './chain-rows.js';
import type { ApplyContext } from './context.js';
import type { NewMicroblocks } from '../protocol/payloads.js';

type MicroblockTx = NewMicroblocks['transactions'][number];

/**
 * Applies `/new_microblocks`: txs streamed after the tip block and not yet confirmed by another block.
 * They are stored at height tip+1 without a block (visible to `unanchored` reads only). A stream built on
 * another block than the tip is ignored, as is everything after a gap in the stream. A microblock that
 * forks the stream orphans the microblocks it replaces. Returns whether anything was added.
 */
export async function applyNewMicroblocks(
  sql: TransactionSql,
  msg: NewMicroblocks,
  ctx: ApplyContext,
): Promise<boolean> {
  const tip = await lockChainTip(sql);
  if (msg.parent_index_block_hash !== tip.index_block_hash) {
    ctx.logger.info(
      { parent_index_block_hash: msg.parent_index_block_hash, tip: tip.index_block_hash },
      'microblocks not built on the chain tip: ignored',
    );
    return false;
  }

  let added = false;
  for (const txs of streamOrder(msg)) {
    const { microblock_hash: hash, microblock_sequence: sequence } = txs[0];
    if (await getMicroblock(sql, hash)) continue;
    if (!(await extendsStream(sql, txs[0], tip))) {
      ctx.logger.warn(
        { microblock_hash: hash, sequence },
        'gap in the microblock stream: rest of message ignored',
      );
      break;
    }
    await storeMicroblock(sql, msg, txs, tip, ctx);
    added = true;
  }
  if (added) await touchMempool(sql, new Date(ctx.receivedAt * 1000));
  return added;
}

/** The message's txs, one list per microblock, in stream order. */
function streamOrder(msg: NewMicroblocks): MicroblockTx[][] {
  const byHash = new Map<string, MicroblockTx[]>();
  for (const tx of msg.transactions) {
    const list = byHash.get(tx.microblock_hash);
    if (list) list.push(tx);
    else byHash.set(tx.microblock_hash, [tx]);
  }
  return [...byHash.values()].sort((a, b) => a[0].microblock_sequence - b[0].microblock_sequence);
}

/** Whether a microblock follows a canonical microblock of the tip's stream (or starts the stream). */
async function extendsStream(sql: TransactionSql, first: MicroblockTx, tip: ChainTip): Promise<boolean> {
  if (first.microblock_sequence === 0) return true;
  const parent = await getMicroblock(sql, first.microblock_parent_hash);
  return !!parent && parent.microblock_canonical && parent.parent_index_block_hash === tip.index_block_hash;
}

/**
 * Stores one microblock and its txs at height tip+1, after orphaning the unconfirmed microblocks it replaces
 * (their txs go back to the mempool).
 */
async function storeMicroblock(
  sql: TransactionSql,
  msg: NewMicroblocks,
  txs: MicroblockTx[],
  tip: ChainTip,
  ctx: ApplyContext,
): Promise<void> {
  const { microblock_hash: hash, microblock_sequence: sequence, microblock_parent_hash: parentHash } = txs[0];
  const replaced = (await unconfirmedMicroblocks(sql)).filter((m) => m.microblock_sequence >= sequence);
  if (replaced.length > 0) {
    const txIds = await orphanMicroblocks(
      sql,
      replaced.map((m) => m.microblock_hash),
    );
    await restoreToMempool(sql, txIds, ctx.receivedAt, tip.block_height);
  }

  await insertMicroblocks(sql, [
    {
      microblock_hash: hash,
      microblock_sequence: sequence,
      microblock_parent_hash: parentHash,
      parent_index_block_hash: msg.parent_index_block_hash,
      index_block_hash: '',
      block_height: tip.block_height + 1,
      burn_block_hash: msg.burn_block_hash,
      burn_block_height: msg.burn_block_height,
      burn_block_time: msg.burn_block_timestamp,
      microblock_canonical: true,
      received_at: ctx.receivedAt,
    },
  ]);
  const txIds = new Set(txs.map((t) => t.txid));
  const skipped: SkippedEvents = new Map();
  const rows = buildChainRows(
    txs,
    msg.events.filter((e) => txIds.has(e.txid)),
    {
      index_block_hash: '',
      block_hash: '',
      block_height: tip.block_height + 1,
      block_time: ctx.receivedAt,
      burn_block_time: -1,
      burn_block_height: -1,
      // the burn block the stream was announced in (what the original API shows for unconfirmed txs)
      parent_burn_block_time: msg.burn_block_timestamp,
      parent_block_hash: tip.block_hash,
      parent_index_block_hash: tip.index_block_hash,
      canonical: true,
    },
    ctx.isMainnet,
    skipped,
  );
  logSkippedEvents(skipped, ctx.logger, { microblock_hash: hash });
  await insertChainRows(sql, rows);
  await pruneMinedTxs(sql, rows.txs);
  await setChainTipMicroblock(sql, hash, sequence);
}

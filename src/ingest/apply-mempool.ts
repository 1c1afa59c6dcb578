import { hexToBuffer, txIdFromRaw } from '../chain/index.js';
import type { TransactionSql } from '../store/db.js';
import { dropMempoolTxs, receiveMempoolTxs } from '../store/write/mempool.js';
import { type MempoolTxRow } from '../store/schema/rows.js';
import { MempoolStatus } from '../store/schema/codes.js';
import { lockChainTip, touchMempool } from '../store/write/tip.js';
import { decodeRawTx, decodedColumns } from './chain-rows.js';
import type { ApplyContext, DecodedMempoolTxs } from './context.js';
import type { DropMempoolTx, NewMempoolTx } from '../protocol/payloads.js';

/**
 * Decodes a `/new_mempool_tx` message's rows outside any database transaction (`Ingestor.prepare`), all
 * but the receipt block height (the tip's, read in the transaction). A raw tx the codec cannot decode is
 * set aside, not refused: the node accepted it into its mempool, so it is one a node sends (a transaction
 * format newer than this codec); refusing the message would stall the node, which re-sends until it gets a
 * 200, and the mempool is advisory. Each one is logged where the message is applied.
 */
export function decodeMempoolTxs(msg: NewMempoolTx, receivedAt: number): DecodedMempoolTxs {
  const rows: MempoolTxRow[] = [];
  const undecodable: DecodedMempoolTxs['undecodable'] = [];
  for (const rawTx of msg) {
    // the hex decoded once, for the id and the codec
    const bytes = hexToBuffer(rawTx);
    const txId = txIdFromRaw(bytes);
    let decoded;
    try {
      decoded = decodeRawTx(bytes, txId);
    } catch (err) {
      undecodable.push({ tx_id: txId, reason: (err as Error).message });
      continue;
    }
    // Object.assign, not a literal spreading the decoded columns: V8 builds that one several times slower
    // (chain-rows.ts `buildChainRows` has the measurement)
    rows.push(
      Object.assign(decodedColumns(txId, rawTx, decoded), {
        pruned: false,
        status: MempoolStatus.pending,
        replaced_by_tx_id: null,
        receipt_time: receivedAt,
        receipt_block_height: -1,
      }),
    );
  }
  return { payload: msg, rows, undecodable };
}

/** Applies `/new_mempool_tx`: raw txs the node accepted into its mempool. */
export async function applyNewMempoolTxs(
  sql: TransactionSql,
  msg: NewMempoolTx,
  ctx: ApplyContext,
): Promise<boolean> {
  const tip = await lockChainTip(sql);
  const decoded =
    ctx.decodedMempoolTxs?.payload === msg ? ctx.decodedMempoolTxs : decodeMempoolTxs(msg, ctx.receivedAt);
  for (const tx of decoded.undecodable) {
    ctx.logger.warn(tx, 'a mempool transaction cannot be decoded: left out (the message is kept in the log)');
  }
  for (const row of decoded.rows) row.receipt_block_height = tip.block_height;
  const changed = await receiveMempoolTxs(sql, decoded.rows, new Date(ctx.receivedAt * 1000), ctx.writesSent);
  return changed > 0;
}

const DROP_REASONS: Record<string, number> = {
  ReplaceByFee: MempoolStatus.dropped_replace_by_fee,
  ReplaceAcrossFork: MempoolStatus.dropped_replace_across_fork,
  TooExpensive: MempoolStatus.dropped_too_expensive,
  StaleGarbageCollect: MempoolStatus.dropped_stale_garbage_collect,
  Problematic: MempoolStatus.dropped_problematic,
};

/**
 * Applies `/drop_mempool_tx`: txs the node removed from its mempool, with the reason. A reason this index has
 * no status for (stacks-core's `MemPoolDropReason` has the five above; a later node may add one) leaves the
 * txs as they are and the message `skipped` in the log, logged: refusing it would stall the node.
 */
export async function applyDropMempoolTxs(
  sql: TransactionSql,
  msg: DropMempoolTx,
  ctx: ApplyContext,
): Promise<boolean | 'skipped'> {
  const status = DROP_REASONS[msg.reason];
  if (status === undefined) {
    ctx.logger.warn(
      { reason: msg.reason, txs: msg.dropped_txids.length, known: Object.keys(DROP_REASONS) },
      'mempool txs dropped for a reason this index does not know: left as they are',
    );
    return 'skipped';
  }
  await lockChainTip(sql);
  const changed = await dropMempoolTxs(sql, msg.dropped_txids, status, msg.new_txid ?? null);
  if (changed > 0) await touchMempool(sql, new Date(ctx.receivedAt * 1000));
  return changed > 0;
}

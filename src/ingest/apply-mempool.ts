import { hexToBuffer, txIdFromRaw } from '../chain/index.js';
import type { TransactionSql } from '../store/db.js';
import { dropMempoolTxs, receiveMempoolTxs } from '../store/write/mempool.js';
import { type MempoolTxRow } from '../store/schema/rows.js';
import { MempoolStatus } from '../store/schema/codes.js';
import { lockChainTip, touchMempool } from '../store/write/tip.js';
import { InvalidMessageError, decodeRawTx, decodedColumns } from './chain-rows.js';
import type { ApplyContext, DecodedMempoolTxs } from './context.js';
import type { DropMempoolTx, NewMempoolTx } from '../protocol/payloads.js';

/**
 * Decodes a `/new_mempool_tx` message's rows outside any database transaction (`Ingestor.prepare`), all
 * but the receipt block height (the tip's, read in the transaction). A decoding error is kept, to be thrown
 * where `applyNewMempoolTxs` decodes.
 */
export function decodeMempoolTxs(msg: NewMempoolTx, receivedAt: number): DecodedMempoolTxs {
  try {
    const rows: MempoolTxRow[] = msg.map((rawTx) => {
      // the hex decoded once, for the id and the codec
      const bytes = hexToBuffer(rawTx);
      const txId = txIdFromRaw(bytes);
      // Object.assign, not a literal spreading the decoded columns: V8 builds that one several times slower
      // (chain-rows.ts `buildChainRows` has the measurement)
      return Object.assign(decodedColumns(txId, rawTx, decodeRawTx(bytes, txId)), {
        pruned: false,
        status: MempoolStatus.pending,
        replaced_by_tx_id: null,
        receipt_time: receivedAt,
        receipt_block_height: -1,
      });
    });
    return { payload: msg, rows };
  } catch (error) {
    return { payload: msg, error };
  }
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
  if (!decoded.rows) throw decoded.error;
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

/** Applies `/drop_mempool_tx`: txs the node removed from its mempool, with the reason. */
export async function applyDropMempoolTxs(
  sql: TransactionSql,
  msg: DropMempoolTx,
  ctx: ApplyContext,
): Promise<boolean> {
  const status = DROP_REASONS[msg.reason];
  if (status === undefined) {
    throw new InvalidMessageError(
      `unknown drop reason "${msg.reason}" (expected one of ${Object.keys(DROP_REASONS).join(', ')})`,
    );
  }
  await lockChainTip(sql);
  const changed = await dropMempoolTxs(sql, msg.dropped_txids, status, msg.new_txid ?? null);
  if (changed > 0) await touchMempool(sql, new Date(ctx.receivedAt * 1000));
  return changed > 0;
}

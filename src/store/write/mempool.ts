import type { TransactionSql } from '../db.js';
import { bulkInsert, columnArrays, PREPARED, sendAll } from './bulk.js';
import { columnSpec, decodedTxColumns, mempoolTxColumns, type ColumnSpec } from '../schema/tables.js';
import { touchMempool } from './tip.js';
import { type MempoolTxRow } from '../schema/rows.js';
import { MempoolStatus } from '../schema/codes.js';
import { canonicalRow } from '../visibility.js';

const mempoolSpec = columnSpec(mempoolTxColumns);

/** Number of blocks after which a pending tx is dropped by our own garbage collection. */
export const MEMPOOL_GC_BLOCKS = 256;
/** Nakamoto blocks come every few seconds: there the age limit is in minutes instead. */
export const MEMPOOL_GC_MINUTES = 2560;

/**
 * Adds txs the node accepted into its mempool. A tx already known and pending is left alone; one that
 * was pruned without being mined is revived; one already mined on the canonical chain is kept pruned.
 * When anything changed, the mempool is marked changed at `at`. Returns the number of rows that changed.
 * (The two reads are sent together, then the writes: see `sendAll`.)
 */
export async function receiveMempoolTxs(
  sql: TransactionSql,
  rows: MempoolTxRow[],
  at: Date,
): Promise<number> {
  if (rows.length === 0) return 0;
  const txIds = rows.map((r) => r.tx_id);
  const [minedRows, existingRows] = await Promise.all([
    sql<{ tx_id: string }[]>`
      SELECT DISTINCT tx_id FROM txs WHERE tx_id = ANY(${txIds}) AND ${sql.unsafe(canonicalRow(''))}`.execute(),
    sql<{ tx_id: string; pruned: boolean }[]>`
      SELECT tx_id, pruned FROM mempool_txs WHERE tx_id = ANY(${txIds})`.execute(),
  ]);
  const mined = new Set(minedRows.map((r) => r.tx_id));
  const existing = new Map(existingRows.map((r) => [r.tx_id, r.pruned]));
  const inserts = rows
    .filter((r) => !existing.has(r.tx_id))
    .map((r) => (mined.has(r.tx_id) ? { ...r, pruned: true } : r));
  const revive = rows.filter((r) => existing.get(r.tx_id) === true && !mined.has(r.tx_id));
  const changed = inserts.length + revive.length;
  if (changed === 0) return 0;
  const pending = [...inserts.filter((r) => !r.pruned), ...revive];
  await sendAll([
    bulkInsert(sql, 'mempool_txs', mempoolSpec, inserts, 'ON CONFLICT (tx_id) DO NOTHING'),
    ...revive.map((r) =>
      sql`
        UPDATE mempool_txs SET pruned = false, status = ${MempoolStatus.pending}, replaced_by_tx_id = NULL,
          receipt_time = ${r.receipt_time}, receipt_block_height = ${r.receipt_block_height}
        WHERE tx_id = ${r.tx_id}`.execute(),
    ),
    resolveReplaceByFee(sql, pending),
    touchMempool(sql, at),
  ]);
  return changed;
}

/**
 * Among pending txs that spend the same (payer, nonce), the highest fee wins (latest receipt on a tie);
 * the others are dropped as replaced by fee.
 */
function resolveReplaceByFee(
  sql: TransactionSql,
  txs: { sender_address: string; nonce: number; sponsored: boolean; sponsor_address: string | null }[],
): Promise<unknown> {
  if (txs.length === 0) return Promise.resolve();
  const senders = txs.map((t) => t.sender_address);
  const nonces = txs.map((t) => t.nonce);
  return sql`
    WITH keys AS (
      SELECT DISTINCT sender_address, nonce FROM unnest(${senders}::text[], ${nonces}::int8[]) AS k(sender_address, nonce)
    ),
    ranked AS (
      SELECT m.tx_id, first_value(m.tx_id) OVER w AS winner, row_number() OVER w AS rank
      FROM mempool_txs m JOIN keys k ON m.sender_address = k.sender_address AND m.nonce = k.nonce
      WHERE NOT m.pruned
      WINDOW w AS (PARTITION BY m.sender_address, m.nonce ORDER BY m.fee_rate DESC, m.receipt_time DESC, m.tx_id)
    )
    UPDATE mempool_txs AS m SET pruned = true, status = ${MempoolStatus.dropped_replace_by_fee},
      replaced_by_tx_id = ranked.winner
    FROM ranked WHERE m.tx_id = ranked.tx_id AND ranked.rank > 1`.execute();
}

/** The columns of a mined tx that prune the mempool. */
export interface MinedTxKey {
  tx_id: string;
  sender_address: string;
  nonce: number;
}

const minedColumns: ColumnSpec<MinedTxKey> = [
  ['tx_id', 'text'],
  ['sender_address', 'text'],
  ['nonce', 'int8'],
];

/**
 * Prunes txs mined on the canonical chain, and pending txs that spend the same (payer, nonce) as a mined
 * one: those can never be mined, the mined tx replaced them. The mined txs come as rows (those of a block
 * being inserted, or `minedTxKeys` of stored blocks) and are joined as arrays: joined from `txs`, the table
 * would be a non-target relation of the UPDATE, carried as whole rows (for EvalPlanQual rechecks), and forming
 * a whole row of `txs` detoasts its wide columns: that made these updates cost ~20 ms per block.
 */
export function pruneMinedTxs(sql: TransactionSql, txs: readonly MinedTxKey[]): Promise<unknown> {
  if (txs.length === 0) return Promise.resolve();
  const params = columnArrays(sql, minedColumns, txs);
  return Promise.all([
    sql
      .unsafe(
        `UPDATE mempool_txs AS m SET pruned = true
         FROM unnest($1::text[]) AS t(tx_id)
         WHERE m.tx_id = t.tx_id AND NOT m.pruned`,
        params.slice(0, 1),
        PREPARED,
      )
      .execute(),
    sql
      .unsafe(
        `UPDATE mempool_txs AS m SET pruned = true, status = ${MempoolStatus.dropped_replace_by_fee},
           replaced_by_tx_id = t.tx_id
         FROM unnest($1::text[], $2::text[], $3::int8[]) AS t(tx_id, sender_address, nonce)
         WHERE NOT m.pruned AND m.tx_id <> t.tx_id
           AND m.sender_address = t.sender_address AND m.nonce = t.nonce`,
        params,
        PREPARED,
      )
      .execute(),
  ]);
}

/** The txs stored in a set of blocks, as `pruneMinedTxs` takes them. */
export async function minedTxKeys(sql: TransactionSql, indexBlockHashes: string[]): Promise<MinedTxKey[]> {
  if (indexBlockHashes.length === 0) return [];
  return sql<MinedTxKey[]>`
    SELECT tx_id, sender_address, nonce FROM txs WHERE index_block_hash = ANY(${indexBlockHashes})`;
}

/** Same as `pruneMinedTxs`, for txs of unconfirmed microblocks (identified by id). */
export async function pruneTxIds(sql: TransactionSql, txIds: string[]): Promise<void> {
  if (txIds.length === 0) return;
  await sql`UPDATE mempool_txs SET pruned = true WHERE tx_id = ANY(${txIds}) AND NOT pruned`;
}

/** The node dropped these txs from its mempool. */
export async function dropMempoolTxs(
  sql: TransactionSql,
  txIds: string[],
  status: number,
  replacedBy: string | null,
): Promise<number> {
  if (txIds.length === 0) return 0;
  const changed = await sql`
    UPDATE mempool_txs SET pruned = true, status = ${status}, replaced_by_tx_id = ${replacedBy}
    WHERE tx_id = ANY(${txIds}) AND (NOT pruned OR status <> ${status})`;
  return changed.count;
}

/**
 * Puts the txs of orphaned blocks or microblocks back into the mempool as pending, unless the tx is
 * (still) mined on the canonical chain. A tx the mempool never saw (e.g. a coinbase) gets a new row.
 */
export async function restoreToMempool(
  sql: TransactionSql,
  txIds: string[],
  receiptTime: number,
  receiptBlockHeight: number,
): Promise<void> {
  if (txIds.length === 0) return;
  const columns = Object.keys(decodedTxColumns);
  await sql`
    INSERT INTO mempool_txs AS m (${sql(columns)}, pruned, status, replaced_by_tx_id, receipt_time, receipt_block_height)
    SELECT DISTINCT ON (t.tx_id) ${sql(columns.map((c) => `t.${c}`))}, false, ${MempoolStatus.pending}, NULL,
      ${receiptTime}, ${receiptBlockHeight}
    FROM txs t
    WHERE t.tx_id = ANY(${txIds})
      AND NOT EXISTS (SELECT 1 FROM txs c WHERE c.tx_id = t.tx_id AND ${sql.unsafe(canonicalRow('c'))})
    ON CONFLICT (tx_id) DO UPDATE SET pruned = false, status = ${MempoolStatus.pending}, replaced_by_tx_id = NULL`;
}

/** Drops pending txs that waited too long: 256 blocks, or 2560 minutes once blocks carry signer bitvecs. */
export function collectMempoolGarbage(
  sql: TransactionSql,
  tipHeight: number,
  nakamoto: boolean,
  now: number,
): Promise<unknown> {
  if (nakamoto) {
    return sql`
      UPDATE mempool_txs SET pruned = true, status = ${MempoolStatus.dropped_api_garbage_collect}
      WHERE NOT pruned AND receipt_time < ${now - MEMPOOL_GC_MINUTES * 60}`.execute();
  }
  return sql`
    UPDATE mempool_txs SET pruned = true, status = ${MempoolStatus.dropped_api_garbage_collect}
    WHERE NOT pruned AND receipt_block_height <= ${tipHeight - MEMPOOL_GC_BLOCKS}`.execute();
}

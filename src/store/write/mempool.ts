import type { TransactionSql } from '../db.js';
import { bulkInsert, cutIntoStatements, PREPARED, sendAll } from './bulk.js';
import { columnSpec, decodedTxColumns, mempoolTxColumns } from '../schema/tables.js';
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
  const insert = bulkInsert(sql, 'mempool_txs', mempoolSpec, inserts, 'ON CONFLICT (tx_id) DO NOTHING');
  // the settling reads the rows inserted: all of them (test/ingest/block-paths.test.ts cuts them in 5s)
  if (cutIntoStatements(sql, inserts.length)) await insert;
  await sendAll([
    insert,
    ...revive.map((r) =>
      sql`
        UPDATE mempool_txs SET pruned = false, status = ${MempoolStatus.pending}, replaced_by_tx_id = NULL,
          receipt_time = ${r.receipt_time}, receipt_block_height = ${r.receipt_block_height}
        WHERE tx_id = ${r.tx_id}`.execute(),
    ),
    resolveSameNonce(sql, [...inserts, ...revive]),
    touchMempool(sql, at),
  ]);
  return changed;
}

// Same-nonce txs, as the original API settles them (its updateReplacedByFeeStatusForTxIds, pruneMempoolTxs
// and dropMempoolTxs; test/ingest/mempool-claims.test.ts builds each sequence):
// - A tx claims the (payer, nonce) pair of its payer (the sponsor of a sponsored tx, else the sender) and
//   its origin nonce. The pair's members are the mempool txs, pending or dropped, whose sender or sponsor
//   is that payer with that nonce. (Not the pairs a node's mempool uses, origin with origin nonce and
//   sponsor with sponsor nonce: tried, gen-small's golden then differs on 7 records, e.g. a sponsored tx
//   and its origin's own tx of the same nonce both pending there.)
// - When a tx of a pair arrives (or comes back), or a block mines one, the pair is settled: its winner is
//   the tx mined last on the canonical chain, else the member with the highest fee (latest receipt on a
//   tie); every other member is dropped as replaced by fee, by the winner, whatever status it had (a
//   garbage-collected tx outbid before it was collected shows as replaced). The winner keeps its status.
// - A tx mined on the canonical chain is pruned from the pending set without a drop status (it shows as
//   mined); node drops and garbage collection change pending txs only.

/** What settling a pair needs of a tx: its payer and origin nonce. */
export interface NonceClaim {
  sender_address: string;
  sponsored: boolean;
  sponsor_address: string | null;
  nonce: number;
}

const payerOf = (tx: NonceClaim) =>
  tx.sponsored && tx.sponsor_address ? tx.sponsor_address : tx.sender_address;

/** Settles the (payer, nonce) pairs `txs` claim (see above). */
export function resolveSameNonce(sql: TransactionSql, txs: readonly NonceClaim[]): Promise<unknown> {
  if (txs.length === 0) return Promise.resolve();
  const payers = txs.map(payerOf);
  const nonces = txs.map((t) => t.nonce);
  // Members and mined txs are found by sender and by sponsor in two index lookups each (UNION), not one
  // join on an OR that no index serves. Each pair's winner is then ranked in one sort over the candidates
  // (the mined txs first, latest first; then the members, best fee first) instead of joining the pairs
  // with per-pair `mined` and `best` sets: planned on CTEs estimated at one or two rows, those joins were
  // nested loops rescanning a sorted CTE per member (85 x 83 rows for a block of 170 pairs): 8 ms of such
  // a block's 8.2 ms, 26% of ingest's statement time on the 500-block bench chain (bench/RESULTS.md).
  // A loser already dropped as replaced by that winner is not rewritten (the same values, a row version
  // and WAL saved).
  return sql`
    WITH pair AS (
      SELECT DISTINCT payer, nonce FROM unnest(${payers}::text[], ${nonces}::int8[]) AS p(payer, nonce)
    ),
    member AS (
      SELECT m.tx_id, m.fee_rate, m.receipt_time, p.payer, p.nonce
      FROM pair p JOIN mempool_txs m ON m.sender_address = p.payer AND m.nonce = p.nonce
      UNION
      SELECT m.tx_id, m.fee_rate, m.receipt_time, p.payer, p.nonce
      FROM pair p JOIN mempool_txs m ON m.sponsor_address = p.payer AND m.nonce = p.nonce AND m.sponsored
    ),
    candidate AS (
      SELECT p.payer, p.nonce, t.tx_id, false AS is_member, t.block_height, t.microblock_sequence, t.tx_index,
        NULL::numeric AS fee_rate, NULL::bigint AS receipt_time
      FROM pair p JOIN txs t ON t.sender_address = p.payer AND t.nonce = p.nonce
      WHERE ${sql.unsafe(canonicalRow('t'))}
      UNION ALL
      SELECT p.payer, p.nonce, t.tx_id, false, t.block_height, t.microblock_sequence, t.tx_index, NULL, NULL
      FROM pair p JOIN txs t ON t.sponsor_address = p.payer AND t.nonce = p.nonce
      WHERE t.sponsored AND ${sql.unsafe(canonicalRow('t'))}
      UNION ALL
      SELECT payer, nonce, tx_id, true, NULL, NULL, NULL, fee_rate, receipt_time FROM member
    ),
    ranked AS (
      SELECT tx_id, is_member, first_value(tx_id) OVER (
          PARTITION BY payer, nonce
          ORDER BY is_member, block_height DESC, microblock_sequence DESC, tx_index DESC,
            fee_rate DESC, receipt_time DESC, tx_id
        ) AS winner
      FROM candidate
    ),
    loser AS (
      SELECT DISTINCT ON (tx_id) tx_id, winner FROM ranked
      WHERE is_member AND tx_id <> winner
      ORDER BY tx_id, winner
    )
    UPDATE mempool_txs AS m SET pruned = true, status = ${MempoolStatus.dropped_replace_by_fee},
      replaced_by_tx_id = loser.winner
    FROM loser WHERE m.tx_id = loser.tx_id
      AND (m.pruned, m.status, m.replaced_by_tx_id)
        IS DISTINCT FROM (true, ${MempoolStatus.dropped_replace_by_fee}::int2, loser.winner)`.execute();
}

/** A mined tx, as pruning the mempool needs it: its id and the (payer, nonce) pair it claims. */
export interface MinedTxKey extends NonceClaim {
  tx_id: string;
}

/**
 * Prunes the pending txs mined (canonical now: in a block, or streamed in an unconfirmed microblock, as
 * the original API prunes both), then settles the pairs the mined txs claim: the other txs of a pair are
 * dropped as replaced by the mined one (`resolveSameNonce`). The mined txs come as rows (those of a block
 * or microblock being inserted, or `minedTxKeys` of stored blocks) instead of being joined from `txs`:
 * joined, `txs` would be a non-target relation of the UPDATE, carried as whole rows (for EvalPlanQual
 * rechecks), and forming a whole row of `txs` detoasts its wide columns: that made pruning cost ~20 ms
 * per block. Both statements are sent at once and run in order (one connection).
 */
export function pruneMinedTxs(sql: TransactionSql, txs: readonly MinedTxKey[]): Promise<unknown> {
  if (txs.length === 0) return Promise.resolve();
  return Promise.all([
    sql
      .unsafe(
        `UPDATE mempool_txs AS m SET pruned = true
         FROM unnest($1::text[]) AS t(tx_id)
         WHERE m.tx_id = t.tx_id AND NOT m.pruned`,
        [txs.map((t) => t.tx_id)],
        PREPARED,
      )
      .execute(),
    resolveSameNonce(sql, txs),
  ]);
}

/** The txs stored in a set of blocks, as `pruneMinedTxs` takes them. */
export async function minedTxKeys(sql: TransactionSql, indexBlockHashes: string[]): Promise<MinedTxKey[]> {
  if (indexBlockHashes.length === 0) return [];
  return sql<MinedTxKey[]>`
    SELECT tx_id, sender_address, sponsored, sponsor_address, nonce
    FROM txs WHERE index_block_hash = ANY(${indexBlockHashes})`;
}

/** The node dropped these txs from its mempool. */
export async function dropMempoolTxs(
  sql: TransactionSql,
  txIds: string[],
  status: number,
  replacedBy: string | null,
): Promise<number> {
  if (txIds.length === 0) return 0;
  // pending txs only: a tx mined, or dropped already, keeps what it shows
  const changed = await sql`
    UPDATE mempool_txs SET pruned = true, status = ${status}, replaced_by_tx_id = ${replacedBy}
    WHERE tx_id = ANY(${txIds}) AND NOT pruned`;
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

import type { TransactionSql } from '../db.js';
import { bulkInsert, columnArrays, cutIntoStatements, PREPARED, sendAll } from './bulk.js';
import { type ColumnSpec, columnSpec, decodedTxColumns, mempoolTxColumns } from '../schema/tables.js';
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
  /** called once the last statements are sent (see ingest/context.ts `writesSent`) */
  writesSent?: () => void,
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
  // the resolution reads the rows inserted: all of them (test/ingest/block-paths.test.ts cuts them in 5s)
  if (cutIntoStatements(sql, inserts.length)) await insert;
  const last = sendAll([
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
  writesSent?.();
  await last;
  return changed;
}

// Same-nonce txs, as the original API resolves them (its updateReplacedByFeeStatusForTxIds, pruneMempoolTxs
// and dropMempoolTxs; test/ingest/mempool-claims.test.ts builds each sequence):
// - A tx claims the (payer, nonce) pair of its payer (the sponsor of a sponsored tx, else the sender) and
//   its origin nonce. The pair's members are the mempool txs, pending or dropped, whose sender or sponsor
//   is that payer with that nonce. (Not the pairs a node's mempool uses, origin with origin nonce and
//   sponsor with sponsor nonce: tried, gen-small's golden then differs on 7 records, e.g. a sponsored tx
//   and its origin's own tx of the same nonce both pending there.)
// - When a tx of a pair arrives (or comes back), or a block mines one, the pair is resolved: its winner is
//   the tx mined last on the canonical chain, else the member with the highest fee (latest receipt on a
//   tie); every other member is dropped as replaced by fee, by the winner, whatever status it had (a
//   garbage-collected tx outbid before it was collected shows as replaced). The winner keeps its status.
// - A tx mined on the canonical chain is pruned from the pending set without a drop status (it shows as
//   mined); node drops and garbage collection change pending txs only.

/** What resolving a pair needs of a tx: its payer and origin nonce. */
export interface NonceClaim {
  sender_address: string;
  sponsored: boolean;
  sponsor_address: string | null;
  nonce: number;
}

const payerOf = (tx: NonceClaim) =>
  tx.sponsored && tx.sponsor_address ? tx.sponsor_address : tx.sender_address;

/** How a pair's mined txs rank: the one mined last on the canonical chain first. */
const LAST_MINED_FIRST = 'block_height DESC, microblock_sequence DESC, tx_index DESC';

/**
 * The mined txs of each pair, from `relation` (rows with the columns of `txs` that resolution reads; the txs of
 * a block becoming the tip, `RESOLVE_AT_TIP`): its canonical rows whose sender, or sponsor if sponsored, is
 * the payer, with the pair's nonce.
 */
const minedOf = (relation: string) => `
      SELECT p.payer, p.nonce, t.tx_id, t.block_height, t.microblock_sequence, t.tx_index
      FROM pair p JOIN ${relation} t ON t.sender_address = p.payer AND t.nonce = p.nonce
      WHERE ${canonicalRow('t')}
      UNION ALL
      SELECT p.payer, p.nonce, t.tx_id, t.block_height, t.microblock_sequence, t.tx_index
      FROM pair p JOIN ${relation} t ON t.sponsor_address = p.payer AND t.nonce = p.nonce
      WHERE t.sponsored AND ${canonicalRow('t')}`;

/**
 * The stored mined txs of each pair that can win. As sender: all of them, as `minedOf` reads them: a
 * sender uses a nonce once on the canonical chain, so these are one tx (and its copies, e.g. streamed in a
 * microblock, then confirmed). As sponsor: only the last mined (a tie on the chain position broken by id,
 * as the ranking breaks it), the first entry of a backward probe of the index on (sponsor, nonce, chain
 * position, id descending) (migration 029), no sort: a sponsor's pair (sponsor, origin nonce) gathers every tx it sponsors with that nonce, a
 * number that grows with the chain, and the others are candidates that never win and never lose (only
 * members lose), so reading them changed nothing. (test/store/same-nonce-lookup.test.ts reads the plan on a
 * pair of 3,000 mined txs.)
 */
const lastMinedStored = `
      SELECT p.payer, p.nonce, t.tx_id, t.block_height, t.microblock_sequence, t.tx_index
      FROM pair p JOIN txs t ON t.sender_address = p.payer AND t.nonce = p.nonce
      WHERE ${canonicalRow('t')}
      UNION ALL
      SELECT p.payer, p.nonce, t.tx_id, t.block_height, t.microblock_sequence, t.tx_index
      FROM pair p CROSS JOIN LATERAL (
        SELECT t.tx_id, t.block_height, t.microblock_sequence, t.tx_index FROM txs t
        WHERE t.sponsor_address = p.payer AND t.nonce = p.nonce AND t.sponsored AND ${canonicalRow('t')}
        ORDER BY ${LAST_MINED_FIRST}, t.tx_id LIMIT 1
      ) t`;

/** The resolution statement, its mined candidates given by `mined` (a query of the pairs' mined txs). */
const resolutionStatement = (mined: string, before = '') => `
    WITH ${before}pair AS (
      SELECT DISTINCT payer, nonce FROM unnest($1::text[], $2::int8[]) AS p(payer, nonce)
    ),
    member AS (
      SELECT m.ctid AS row_id, m.tx_id, m.fee_rate, m.receipt_time, m.pruned, m.status, m.replaced_by_tx_id,
        p.payer, p.nonce
      FROM pair p JOIN mempool_txs m ON m.sender_address = p.payer AND m.nonce = p.nonce
      UNION
      SELECT m.ctid, m.tx_id, m.fee_rate, m.receipt_time, m.pruned, m.status, m.replaced_by_tx_id,
        p.payer, p.nonce
      FROM pair p JOIN mempool_txs m ON m.sponsor_address = p.payer AND m.nonce = p.nonce AND m.sponsored
    ),
    candidate AS (
      SELECT payer, nonce, tx_id, false AS is_member, block_height, microblock_sequence, tx_index,
        NULL::numeric AS fee_rate, NULL::bigint AS receipt_time, NULL::tid AS row_id, NULL::boolean AS pruned,
        NULL::int2 AS status, NULL::text AS replaced_by_tx_id
      FROM (${mined}) AS mined
      UNION ALL
      SELECT payer, nonce, tx_id, true, NULL, NULL, NULL, fee_rate, receipt_time, row_id, pruned, status,
        replaced_by_tx_id
      FROM member
    ),
    ranked AS (
      SELECT tx_id, is_member, row_id, pruned, status, replaced_by_tx_id, first_value(tx_id) OVER (
          PARTITION BY payer, nonce
          ORDER BY is_member, ${LAST_MINED_FIRST}, fee_rate DESC, receipt_time DESC, tx_id
        ) AS winner
      FROM candidate
    ),
    loser AS (
      SELECT DISTINCT ON (tx_id) tx_id, winner, row_id, pruned, status, replaced_by_tx_id FROM ranked
      WHERE is_member AND tx_id <> winner
      ORDER BY tx_id, winner
    )
    UPDATE mempool_txs AS m SET pruned = true, status = $3::int2, replaced_by_tx_id = loser.winner
    FROM loser WHERE m.ctid = loser.row_id
      AND (loser.pruned, loser.status, loser.replaced_by_tx_id) IS DISTINCT FROM (true, $3::int2, loser.winner)`;

/** @internal exported for its tests */
export const RESOLVE_FROM_STORED = resolutionStatement(lastMinedStored);

/** A mined tx, as pruning the mempool needs it: its id and the (payer, nonce) pair it claims. */
export interface MinedTxClaim extends NonceClaim {
  tx_id: string;
}

/** A tx of the block becoming the chain tip, with its place in the chain. */
export interface TipTx extends MinedTxClaim {
  block_height: number;
  microblock_sequence: number;
  tx_index: number;
  canonical: boolean;
  microblock_canonical: boolean;
}

const tipTxSpec: ColumnSpec<TipTx> = [
  ['tx_id', 'text'],
  ['sender_address', 'text'],
  ['sponsor_address', 'text'],
  ['sponsored', 'bool'],
  ['nonce', 'int8'],
  ['block_height', 'int4'],
  ['microblock_sequence', 'int4'],
  ['tx_index', 'int4'],
  ['canonical', 'bool'],
  ['microblock_canonical', 'bool'],
];

/**
 * The same statement when the mined txs are those of a block becoming the chain tip (from $4 on: the
 * columns of `tipTxSpec`). Every pair they claim has one of them among its mined txs (a tx claims its payer's
 * pair, and matches it as sender or as sponsor), and they are mined after every other canonical tx (the
 * block is above every canonical block, and no unconfirmed microblock builds on it yet), so a pair's winner
 * is one of them and the stored mined txs, only ever candidates and never members, change nothing: they
 * are not read (not even the last of each pair, as `lastMinedStored` reads them).
 */
const RESOLVE_AT_TIP = resolutionStatement(
  minedOf('tip_tx'),
  `tip_tx AS (
      SELECT * FROM unnest(${tipTxSpec.map(([, type], i) => `$${i + 4}::${type}[]`).join(', ')})
        AS t(${tipTxSpec.map(([name]) => name).join(', ')})
    ),
    `,
);

/** Resolves the (payer, nonce) pairs `txs` claim (see above). Gives the number of mempool rows it changed. */
export function resolveSameNonce(sql: TransactionSql, txs: readonly NonceClaim[]): Promise<number> {
  if (txs.length === 0) return Promise.resolve(0);
  return sql
    .unsafe(
      RESOLVE_FROM_STORED,
      [txs.map(payerOf), txs.map((t) => t.nonce), MempoolStatus.dropped_replace_by_fee],
      PREPARED,
    )
    .execute()
    .then((result) => result.count);
}

/** Resolves the pairs that the txs of the block becoming the chain tip claim (`RESOLVE_AT_TIP`). */
function resolveSameNonceAtTip(sql: TransactionSql, txs: readonly TipTx[]): Promise<unknown> {
  if (txs.length === 0) return Promise.resolve();
  return sql
    .unsafe(
      RESOLVE_AT_TIP,
      [
        txs.map(payerOf),
        txs.map((t) => t.nonce),
        MempoolStatus.dropped_replace_by_fee,
        ...columnArrays(sql, tipTxSpec, txs),
      ],
      PREPARED,
    )
    .execute();
}

/**
 * Resolves the pairs the mined txs claim: the other txs of a pair are dropped as replaced by the mined one
 * (`resolveSameNonce`), then prunes the pending txs mined (canonical now: in a block, or streamed in an
 * unconfirmed microblock, as the original API prunes both). In that order each row is written once: a
 * mined tx that loses its pair (two txs of one pair mined in a block: the later one wins) is pruned by the
 * resolution, which the prune then skips, where pruned first it was written twice (test/ingest/mempool-claims
 * .test.ts); the rows end the same in either order (the prune sets only `pruned`, which the resolution sets on
 * every loser, and the resolution neither reads `pruned` to rank nor writes winners). The mined txs come as
 * rows (those of a block or microblock being inserted, or `minedTxClaims` of stored blocks) instead of being
 * joined from `txs`: joined, `txs` would be a non-target relation of the UPDATE, carried as whole rows (for
 * EvalPlanQual rechecks), and forming a whole row of `txs` detoasts its wide columns: that made pruning
 * cost ~20 ms per block. Both statements are sent at once and run in order (one connection). Given `{ atTip: true }`,
 * the txs are all the txs of a block becoming the chain tip, and resolution ranks them as the pairs' mined
 * txs without reading the stored ones (`RESOLVE_AT_TIP`; test/ingest/block-paths.test.ts compares it with
 * the stored lookup, which the read-back path takes).
 */
export function pruneMinedTxs(sql: TransactionSql, txs: readonly MinedTxClaim[]): Promise<unknown>;
export function pruneMinedTxs(
  sql: TransactionSql,
  txs: readonly TipTx[],
  options: { atTip: true },
): Promise<unknown>;
export function pruneMinedTxs(
  sql: TransactionSql,
  txs: readonly MinedTxClaim[] | readonly TipTx[],
  options?: { atTip: true },
): Promise<unknown> {
  if (txs.length === 0) return Promise.resolve();
  return Promise.all([
    // a block whose rows go in several statements (stored, then, before this runs) is resolved from the
    // stored txs: its txs' columns in one statement would exceed the bound on a statement's size that
    // cutting keeps (test/reliability/large-message.test.ts, PGlite)
    options?.atTip && !cutIntoStatements(sql, txs.length)
      ? resolveSameNonceAtTip(sql, txs as readonly TipTx[])
      : resolveSameNonce(sql, txs),
    sql
      .unsafe(
        `UPDATE mempool_txs AS m SET pruned = true
         FROM unnest($1::text[]) AS t(tx_id)
         WHERE m.tx_id = t.tx_id AND NOT m.pruned`,
        [txs.map((t) => t.tx_id)],
        PREPARED,
      )
      .execute(),
  ]);
}

/** The txs stored in a set of blocks, as `pruneMinedTxs` takes them. */
export async function minedTxClaims(
  sql: TransactionSql,
  indexBlockHashes: string[],
): Promise<MinedTxClaim[]> {
  if (indexBlockHashes.length === 0) return [];
  return sql<MinedTxClaim[]>`
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

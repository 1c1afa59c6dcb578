import type { TransactionSql } from '../db.js';
import {
  bulkInsert,
  columnArrays,
  encodedLiterals,
  encodeStatements,
  forgetColumn,
  inStatementsOfBoundedSize,
  PREPARED,
  type EncodedStatements,
  unnestSelectList,
} from './bulk.js';
import {
  blockColumns,
  columnSpec,
  type ColumnSpec,
  eventColumns,
  minerRewardColumns,
  principalTxColumns,
  smartContractColumns,
  txColumns,
} from '../schema/tables.js';
import type { BlockRow, ChainRows, MinerRewardRow, PrincipalTxRow, TxRow } from '../schema/rows.js';
import { anchoredVisibleRow } from '../visibility.js';

const blockSpec = columnSpec(blockColumns);
const txSpec = columnSpec(txColumns);
const eventSpec = columnSpec(eventColumns);
const smartContractSpec = columnSpec(smartContractColumns);
const principalTxSpec = columnSpec(principalTxColumns);
const minerRewardSpec = columnSpec(minerRewardColumns);

// The insert helpers send their statements at once and need not be awaited one by one (see `sendAll`).

export function insertBlock(sql: TransactionSql, block: BlockRow): Promise<unknown> {
  return bulkInsert(sql, 'blocks', blockSpec, [block]);
}

/**
 * A block's `tx_ids_json` (migration 023): the ids of the txs mined in it, newest first (microblock sequence,
 * then tx index, descending: anchored txs carry the highest sequence), as JSON array text. Built from the
 * block's rows in hand when they are distinct (`distinctTxKeys`); `storeBlockTxIds` reads the same list back
 * from the stored rows, and test/ingest/block-paths.test.ts proves the two equal.
 */
export function blockTxIdsJson(txs: readonly TxRow[]): string {
  const newestFirst = [...txs].sort(
    (a, b) => b.microblock_sequence - a.microblock_sequence || b.tx_index - a.tx_index,
  );
  return JSON.stringify(newestFirst.map((tx) => tx.tx_id));
}

/**
 * Rewrites a block's `tx_ids_json` from its stored tx rows: after rows were added under it other than the
 * distinct rows in hand (a payload repeating a tx, block 0's rows adopted by block 1). Awaited after the rows'
 * inserts, which a large block sends in several statements.
 */
export function storeBlockTxIds(sql: TransactionSql, indexBlockHash: string): Promise<unknown> {
  return sql
    .unsafe(
      `UPDATE blocks SET tx_ids_json = (
        SELECT '[' || coalesce(string_agg(to_json(t.tx_id)::text, ',' ORDER BY t.microblock_sequence DESC, t.tx_index DESC), '') || ']'
        FROM txs t WHERE t.index_block_hash = $1)
      WHERE index_block_hash = $1`,
      [indexBlockHash],
      PREPARED,
    )
    .execute();
}

export function insertMinerRewards(sql: TransactionSql, rows: MinerRewardRow[]): Promise<unknown> {
  return bulkInsert(sql, 'miner_rewards', minerRewardSpec, rows);
}

/**
 * Inserts the txs, events, deployed contracts and principal index rows of a block or microblock batch.
 * With `ordinals` (rows of a block that is canonical as it arrives) the principal index rows are numbered
 * on insert, after each principal's current count, and the counts raised in the same statement: what
 * `assignOrdinals` does afterwards for blocks that become canonical later (a reorg), without rewriting rows.
 *
 * With `fresh` the caller knows no row can exist yet (a block stored for the first time, whose tx keys are
 * distinct): the rows are inserted without `ON CONFLICT`, which would cost each row a probe of every unique
 * index before the insert and one more WAL record after it (speculative insertion). Otherwise a row already
 * stored (e.g. a microblock's staged rows sent again) is left as it is.
 */
export function insertChainRows(
  sql: TransactionSql,
  rows: ChainRows,
  options: { ordinals?: boolean; fresh?: boolean; encoded?: EncodedChainRows } = {},
): Promise<unknown> {
  const onConflict = options.fresh ? '' : 'ON CONFLICT DO NOTHING';
  const encoded = options.encoded;
  return Promise.all([
    bulkInsert(sql, 'txs', txSpec, rows.txs, onConflict, encoded?.txs),
    bulkInsert(sql, 'events', eventSpec, rows.events, onConflict, encoded?.events),
    bulkInsert(sql, 'smart_contracts', smartContractSpec, rows.smartContracts, 'ON CONFLICT DO NOTHING'),
    options.ordinals
      ? insertPrincipalTxsWithOrdinals(
          sql,
          rows.principalTxs,
          options.fresh ?? false,
          encoded?.principalTxsInChainOrder,
        )
      : options.fresh
        ? bulkInsert(sql, 'principal_txs', principalTxSpec, rows.principalTxs)
        : inStatementsOfBoundedSize(sql, rows.principalTxs, (chunk) =>
            sql
              .unsafe(
                `INSERT INTO principal_txs (${PRINCIPAL_TX_NAMES}) ${PRINCIPAL_TXS_NOT_STORED}`,
                columnArrays(sql, principalTxSpec, chunk),
                PREPARED,
              )
              .execute(),
          ),
  ]);
}

/**
 * The literals of `insertChainRows`'s statements for a block's txs, events and (in chain order, as numbered
 * on insert) principal index rows, built before the transaction (store/write/bulk.ts `EncodedStatements`).
 * All columns but `canonical`, which the chain tip decides inside the transaction (a one-letter element per
 * row, built when sent).
 */
export interface EncodedChainRows {
  txs: EncodedStatements;
  events: EncodedStatements;
  principalTxsInChainOrder?: EncodedStatements;
}

export function encodeChainRows(rows: ChainRows, rowsPerStatement: number): EncodedChainRows {
  const ahead = <Row>(spec: ColumnSpec<Row>) => spec.filter(([name]) => name !== 'canonical');
  return {
    txs: encodeStatements(ahead(txSpec), rows.txs, rowsPerStatement),
    events: encodeStatements(ahead(eventSpec), rows.events, rowsPerStatement),
    principalTxsInChainOrder: encodeStatements(
      ahead(principalTxSpec),
      inChainOrder(rows.principalTxs),
      rowsPerStatement,
    ),
  };
}

/**
 * The rows' tx indexes changed after `encodeChainRows` (a confirmed microblock tx placed as streamed): that
 * column's literals are built again from the rows when sent, and the principal rows' (whose chain order
 * may have changed) all of them.
 */
export function forgetEncodedTxIndexes(encoded: EncodedChainRows | undefined): void {
  if (!encoded) return;
  forgetColumn(encoded.txs, 'tx_index');
  forgetColumn(encoded.events, 'tx_index');
  encoded.principalTxsInChainOrder = undefined;
}

/** Whether the txs' keys (tx id, microblock) are distinct, so a new block's rows cannot collide. */
export function distinctTxKeys(txs: readonly TxRow[]): boolean {
  const keys = new Set<string>();
  for (const tx of txs) keys.add(`${tx.tx_id}|${tx.microblock_hash}`);
  return keys.size === txs.length;
}

/** Principal index rows in chain order (height, microblock sequence, tx index), as `assignOrdinals` ranks them. */
function inChainOrder(rows: readonly PrincipalTxRow[]): PrincipalTxRow[] {
  return [...rows].sort(
    (a, b) =>
      a.block_height - b.block_height ||
      a.microblock_sequence - b.microblock_sequence ||
      a.tx_index - b.tx_index,
  );
}

const principalTxNames = (alias = '') => principalTxSpec.map(([name]) => alias + name).join(', ');
const PRINCIPAL_TX_NAMES = principalTxNames();

/**
 * The principal index rows of a statement's column arrays (in `principalTxSpec`'s order) to insert, as a
 * SELECT with the columns' names. Unless `fresh`, the rows already stored and all but the first of the rows
 * given twice (a block repeating a tx) are left out: the table has no unique key on a row's identity
 * (migration 028), so this is the check ON CONFLICT DO NOTHING made. Ingest is the only writer and runs one
 * message at a time (the chain tip's row lock), so no concurrent insert can slip between probe and insert.
 * The probe seeks the row by `principal_txs_tx_idx` (tx_id, principal) (test/store/principal-index.test.ts).
 */
function principalTxsToInsert(fresh: boolean): string {
  const arrays = principalTxSpec.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  if (fresh) return `SELECT ${unnestSelectList(principalTxSpec)}`;
  return `SELECT DISTINCT ON (u.principal, u.tx_id, u.index_block_hash, u.microblock_hash) ${principalTxNames('u.')}
    FROM unnest(${arrays}) WITH ORDINALITY AS u(${PRINCIPAL_TX_NAMES}, n)
    WHERE NOT EXISTS (
      SELECT FROM principal_txs p
      WHERE p.tx_id = u.tx_id AND p.principal = u.principal AND p.index_block_hash = u.index_block_hash
        AND p.microblock_hash = u.microblock_hash)
    ORDER BY u.principal, u.tx_id, u.index_block_hash, u.microblock_hash, u.n`;
}

const PRINCIPAL_TXS_NOT_STORED = principalTxsToInsert(false);

function insertPrincipalTxsWithOrdinals(
  sql: TransactionSql,
  rows: PrincipalTxRow[],
  fresh: boolean,
  encoded: EncodedStatements | undefined,
): Promise<unknown> {
  // Ranked in chain order as `assignOrdinals` does. Every row of `u` is inserted (`principalTxsToInsert`), so
  // the counts are raised by them: the counts' upsert runs first and returns each principal's count after
  // this statement, and a principal's rows are numbered after its count before (the count after, less its
  // rows here). (Joined to the counts as they were, the planner read the whole of principal_stats for each
  // statement, a sequential scan of 10,000 rows and a hash join for ~120 rows, planned on its estimate for
  // a CTE: 2.4 of a 10 ms statement on the 500-block bench chain, bench/RESULTS.md.) Cut into statements in
  // that same order, each statement numbers its rows after the counts the previous ones raised: the same
  // ordinals as one statement would give. (The sort is stable: the same rows give the order `encoded` was
  // built in.)
  const ordered = inChainOrder(rows);
  return inStatementsOfBoundedSize(sql, ordered, (chunk, statement) =>
    sql
      .unsafe(
        `WITH u AS (${principalTxsToInsert(fresh)}),
      counted AS (
        INSERT INTO principal_stats AS s (principal, tx_count)
        SELECT principal, count(*) FROM u GROUP BY principal
        ON CONFLICT (principal) DO UPDATE SET tx_count = s.tx_count + excluded.tx_count
        RETURNING s.principal, s.tx_count
      )
      INSERT INTO principal_txs (${PRINCIPAL_TX_NAMES}, ordinal)
      SELECT ${principalTxNames('u.')},
        c.tx_count - count(*) OVER (PARTITION BY u.principal) + row_number() OVER (
          PARTITION BY u.principal ORDER BY u.block_height, u.microblock_sequence, u.tx_index)
      FROM u JOIN counted c ON c.principal = u.principal`,
        columnArrays(sql, principalTxSpec, chunk, encodedLiterals(sql, encoded, statement)),
        PREPARED,
      )
      .execute(),
  );
}

export interface StoredBlock {
  index_block_hash: string;
  block_hash: string;
  block_height: number;
  parent_index_block_hash: string;
  burn_block_height: number;
  canonical: boolean;
  message_hash: string | null;
}

const storedBlockColumns = (sql: TransactionSql) =>
  sql`index_block_hash, block_hash, block_height, parent_index_block_hash, burn_block_height, canonical, message_hash`;

export async function getBlock(
  sql: TransactionSql,
  indexBlockHash: string,
): Promise<StoredBlock | undefined> {
  const [block] = await sql<StoredBlock[]>`
    SELECT ${storedBlockColumns(sql)}
    FROM blocks WHERE index_block_hash = ${indexBlockHash}`;
  return block;
}

/** Canonical blocks above a height, highest first. */
export async function canonicalBlocksAbove(sql: TransactionSql, height: number): Promise<StoredBlock[]> {
  return sql<StoredBlock[]>`
    SELECT ${storedBlockColumns(sql)}
    FROM blocks WHERE canonical AND block_height > ${height}
    ORDER BY block_height DESC`;
}

/** Flips `canonical` on a set of blocks and every row mined in them. */
export async function setBlocksCanonical(
  sql: TransactionSql,
  indexBlockHashes: string[],
  canonical: boolean,
): Promise<void> {
  if (indexBlockHashes.length === 0) return;
  await sql`UPDATE blocks SET canonical = ${canonical} WHERE index_block_hash = ANY(${indexBlockHashes})`;
  await sql`UPDATE txs SET canonical = ${canonical} WHERE index_block_hash = ANY(${indexBlockHashes})`;
  await sql`UPDATE events SET canonical = ${canonical} WHERE index_block_hash = ANY(${indexBlockHashes})`;
  await sql`UPDATE smart_contracts SET canonical = ${canonical} WHERE index_block_hash = ANY(${indexBlockHashes})`;
  await sql`UPDATE principal_txs SET canonical = ${canonical} WHERE index_block_hash = ANY(${indexBlockHashes})`;
  await sql`UPDATE miner_rewards SET canonical = ${canonical} WHERE index_block_hash = ANY(${indexBlockHashes})`;
}

/** Where a tx is mined on the canonical chain. */
export interface CanonicalTx {
  tx_id: string;
  block_height: number;
}

/** The rows of these txs mined in canonical blocks (a confirmed microblock's included). */
export async function canonicalMinedTxs(sql: TransactionSql, txIds: string[]): Promise<CanonicalTx[]> {
  if (txIds.length === 0) return [];
  return sql<CanonicalTx[]>`
    SELECT tx_id, block_height FROM txs WHERE tx_id = ANY(${txIds}) AND ${sql.unsafe(anchoredVisibleRow(''))}`;
}

/**
 * A tx of these blocks (a fork just made canonical) that is now mined in two canonical blocks, and the lower
 * of their heights; undefined when there is none.
 */
export async function txMinedTwice(
  sql: TransactionSql,
  indexBlockHashes: string[],
): Promise<CanonicalTx | undefined> {
  if (indexBlockHashes.length === 0) return undefined;
  const [twice] = await sql<CanonicalTx[]>`
    SELECT tx_id, min(block_height)::int AS block_height FROM txs
    WHERE tx_id IN (SELECT tx_id FROM txs WHERE index_block_hash = ANY(${indexBlockHashes}))
      AND ${sql.unsafe(anchoredVisibleRow(''))}
    GROUP BY tx_id HAVING count(DISTINCT index_block_hash) > 1
    LIMIT 1`;
  return twice;
}

/** Tx ids mined in a set of blocks. */
export async function txIdsOfBlocks(sql: TransactionSql, indexBlockHashes: string[]): Promise<string[]> {
  if (indexBlockHashes.length === 0) return [];
  const rows = await sql<{ tx_id: string }[]>`
    SELECT tx_id FROM txs WHERE index_block_hash = ANY(${indexBlockHashes})`;
  return rows.map((r) => r.tx_id);
}

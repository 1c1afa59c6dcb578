import type { TransactionSql } from '../db.js';
import type { ChainRows, PrincipalTxRow } from '../schema/rows.js';
import { columnSpec, sponsorTxColumns, type ColumnSpec } from '../schema/tables.js';
import { columnArrays, PREPARED, unnestSelectList } from './bulk.js';

// The transactions a principal sponsored without otherwise taking part in them (migration 034), numbered as
// blocks become canonical and deleted as a reorg orphans them. A sponsor row's place in the sponsor's whole
// list counts the sponsor's principal index rows before it, so it is numbered once those of its blocks are
// numbered and counted (principal_stats.tx_count).

/**
 * A sponsor row of new canonical blocks, before numbering, with where it falls among the sponsor's rows of
 * the same blocks, in chain order (height, microblock sequence, tx index, tx id).
 */
export type SponsorRow = { sponsor: string } & Pick<
  ChainRows['txs'][number],
  'tx_id' | 'index_block_hash' | 'microblock_hash' | 'block_height' | 'microblock_sequence' | 'tx_index'
> & {
    /** its number among the sponsor's sponsor rows of these blocks, from 1 */
    sponsor_rank: number;
    /** the sponsor's principal index rows of these blocks before it */
    principal_rows_before: number;
    /** the sponsor's principal index rows of these blocks */
    principal_rows: number;
  };

const SOURCE_SPEC: ColumnSpec<SponsorRow> = [
  ...(columnSpec(sponsorTxColumns).filter(
    ([name]) => name !== 'sponsor_ordinal' && name !== 'list_ordinal',
  ) as ColumnSpec<SponsorRow>),
  ['sponsor_rank', 'int4'],
  ['principal_rows_before', 'int4'],
  ['principal_rows', 'int4'],
];
const STORED_NAMES = SOURCE_SPEC.slice(0, -3).map(([name]) => name);

/**
 * Numbers the sponsor rows of a source (a select of `SOURCE_SPEC`'s columns, all of canonical blocks newer
 * than every row stored, whose principal index rows are numbered and counted): a row's number in the
 * sponsor's series follows the series' last, and its place in the sponsor's whole list is that number plus
 * the sponsor's principal index rows before it: those of older blocks (its count, less its rows of these
 * blocks) and those of these blocks before it. Two probes a sponsor, none a row: its series' last number
 * (sponsor_txs_pkey) and its count (principal_stats_pkey); a probe a row for the sponsor's principal index
 * row before it was most of the statement (bench finding F-ingest-sponsor-rows-in-hand).
 */
const numbered = (source: string) => `
  WITH r AS (${source}),
  base AS (
    SELECT d.sponsor,
      coalesce((SELECT x.sponsor_ordinal FROM sponsor_txs x WHERE x.sponsor = d.sponsor
        ORDER BY x.sponsor_ordinal DESC LIMIT 1), 0) AS sponsored,
      coalesce((SELECT s.tx_count FROM principal_stats s WHERE s.principal = d.sponsor), 0) AS numbered
    FROM (SELECT DISTINCT sponsor FROM r) AS d
  )
  INSERT INTO sponsor_txs (${STORED_NAMES.join(', ')}, sponsor_ordinal, list_ordinal)
  SELECT ${STORED_NAMES.map((name) => `r.${name}`).join(', ')}, b.sponsored + r.sponsor_rank,
    b.sponsored + r.sponsor_rank + b.numbered - r.principal_rows + r.principal_rows_before
  FROM r JOIN base b ON b.sponsor = r.sponsor`;

const FROM_ARRAYS = numbered(`SELECT ${unnestSelectList(SOURCE_SPEC)}`);

/**
 * The sponsor rows of stored blocks ($1), placed among their sponsors' principal index rows of the blocks
 * by one pass over both in chain order (a principal index row counts 1 towards `principal_rows_before`, a
 * sponsor row 1 towards `sponsor_rank`), as `sponsorRowsOf` places them in hand. The sponsored txs are read
 * once: as a subquery joined to the blocks' principal index rows, they were planned for one such row and read
 * again for each (bench finding F-ingest-sponsor-rows-in-hand).
 */
const FROM_STORED = numbered(`
  WITH sponsored AS (
    SELECT t.sponsor_address AS sponsor, ${STORED_NAMES.filter((name) => name !== 'sponsor')
      .map((name) => `t.${name}`)
      .join(', ')}
    FROM txs t
    WHERE t.index_block_hash = ANY($1::text[]) AND t.sponsored
      AND NOT EXISTS (
        SELECT FROM principal_txs p
        WHERE p.tx_id = t.tx_id AND p.principal = t.sponsor_address AND p.index_block_hash = t.index_block_hash
          AND p.microblock_hash = t.microblock_hash)
  )
  SELECT ${STORED_NAMES.join(', ')}, sponsor_rank::int4, principal_rows_before::int4, principal_rows::int4
  FROM (
    SELECT u.*,
      sum(1 - u.principal_row) OVER ranked AS sponsor_rank,
      sum(u.principal_row) OVER ranked AS principal_rows_before,
      sum(u.principal_row) OVER (PARTITION BY u.sponsor) AS principal_rows
    FROM (
      SELECT s.*, 0 AS principal_row FROM sponsored s
      UNION ALL
      SELECT ${STORED_NAMES.map((name) => (name === 'sponsor' ? 'p.principal' : `p.${name}`)).join(', ')}, 1
      FROM principal_txs p
      WHERE p.index_block_hash = ANY($1::text[]) AND p.principal IN (SELECT sponsor FROM sponsored)
    ) AS u
    WINDOW ranked AS (PARTITION BY u.sponsor
      ORDER BY u.block_height, u.microblock_sequence, u.tx_index, u.principal_row DESC, u.tx_id
      ROWS UNBOUNDED PRECEDING)
  ) AS v
  WHERE v.principal_row = 0`);

type ChainKey = Pick<PrincipalTxRow, 'block_height' | 'microblock_sequence' | 'tx_index' | 'tx_id'>;

/** Where a tx sits on the chain: the principal index numbers its rows in this order. */
const byPosition = (a: ChainKey, b: ChainKey) =>
  a.block_height - b.block_height || a.microblock_sequence - b.microblock_sequence || a.tx_index - b.tx_index;

/** Sponsor rows are ranked by position, then tx id (a text column "C": code point order). */
const byPositionThenId = (a: ChainKey, b: ChainKey) =>
  byPosition(a, b) || (a.tx_id < b.tx_id ? -1 : a.tx_id > b.tx_id ? 1 : 0);

/**
 * The sponsor rows of a new canonical block's rows in hand (its sponsored txs whose sponsor has no principal
 * index row of the tx), placed among the sponsors' principal index rows in hand: the counts `numbered`
 * needs, without a lookup a row.
 */
export function sponsorRowsOf(rows: ChainRows): SponsorRow[] {
  const sponsored = rows.txs.filter((tx) => tx.sponsored && tx.sponsor_address !== null);
  if (sponsored.length === 0) return [];
  const principalRows = new Map<string, PrincipalTxRow[]>();
  for (const tx of sponsored) principalRows.set(tx.sponsor_address!, []);
  for (const p of rows.principalTxs) principalRows.get(p.principal)?.push(p);
  for (const own of principalRows.values()) own.sort(byPosition);
  const placed = new Map<string, { rank: number; before: number }>();
  const sponsorRows: SponsorRow[] = [];
  for (const tx of sponsored.sort(byPositionThenId)) {
    const sponsor = tx.sponsor_address!;
    const own = principalRows.get(sponsor)!;
    if (own.some((p) => p.tx_id === tx.tx_id && p.microblock_hash === tx.microblock_hash)) continue;
    const at = placed.get(sponsor) ?? { rank: 0, before: 0 };
    while (at.before < own.length && byPosition(own[at.before], tx) <= 0) at.before++;
    at.rank++;
    placed.set(sponsor, at);
    sponsorRows.push({
      sponsor,
      tx_id: tx.tx_id,
      index_block_hash: tx.index_block_hash,
      microblock_hash: tx.microblock_hash,
      block_height: tx.block_height,
      microblock_sequence: tx.microblock_sequence,
      tx_index: tx.tx_index,
      sponsor_rank: at.rank,
      principal_rows_before: at.before,
      principal_rows: own.length,
    });
  }
  return sponsorRows;
}

/**
 * Inserts and numbers the sponsor rows of a new canonical block (`sponsorRowsOf`), once its principal index
 * rows are all stored and counted; none sent when there are none.
 */
export function insertSponsorTxs(sql: TransactionSql, sponsorRows: SponsorRow[]): Promise<unknown> {
  if (sponsorRows.length === 0) return Promise.resolve();
  return sql.unsafe(FROM_ARRAYS, columnArrays(sql, SOURCE_SPEC, sponsorRows), PREPARED).execute();
}

/** The sponsor rows of blocks made canonical (their rows stored, their principal index rows numbered). */
export function numberSponsorTxs(sql: TransactionSql, indexBlockHashes: string[]): Promise<unknown> {
  if (indexBlockHashes.length === 0) return Promise.resolve();
  return sql.unsafe(FROM_STORED, [indexBlockHashes], PREPARED).execute();
}

/** Deletes the sponsor rows of blocks a reorg orphans (the newest: what remains stays numbered 1..n). */
export function releaseSponsorTxs(sql: TransactionSql, indexBlockHashes: string[]): Promise<unknown> {
  if (indexBlockHashes.length === 0) return Promise.resolve();
  return sql
    .unsafe('DELETE FROM sponsor_txs WHERE index_block_hash = ANY($1::text[])', [indexBlockHashes], PREPARED)
    .execute();
}

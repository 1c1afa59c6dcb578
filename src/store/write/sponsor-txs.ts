import type { TransactionSql } from '../db.js';
import type { ChainRows } from '../schema/rows.js';
import { columnSpec, sponsorTxColumns, type ColumnSpec } from '../schema/tables.js';
import { columnArrays, PREPARED, unnestSelectList } from './bulk.js';

// The transactions a principal sponsored without otherwise taking part in them (migration 034), numbered as
// blocks become canonical and deleted as a reorg orphans them. Numbered after the principal index rows of the
// same blocks (their ordinals give each row's place in the sponsor's whole list), so sent after them.

/** A sponsor row as found (before numbering). */
type SponsorRow = { sponsor: string } & Pick<
  ChainRows['txs'][number],
  'tx_id' | 'index_block_hash' | 'microblock_hash' | 'block_height' | 'microblock_sequence' | 'tx_index'
>;
const SOURCE_SPEC = columnSpec(sponsorTxColumns).filter(
  ([name]) => name !== 'sponsor_ordinal' && name !== 'list_ordinal',
) as ColumnSpec<SponsorRow>;
const SOURCE_NAMES = SOURCE_SPEC.map(([name]) => name);

/**
 * Numbers the sponsor rows of a source (a select of `SOURCE_NAMES`, all of canonical blocks newer than every
 * row stored) after the rows each sponsor has: its own series, and its place in its whole list, which is its
 * number in the series plus the principal index ordinal of its last row before it (the principal index rows
 * of the same blocks are numbered already). Both seeks are index probes (the sponsor's last row; its
 * principal index rows at the height, principal_txs_principal_height_idx).
 */
const numbered = (source: string) => `
  INSERT INTO sponsor_txs (${SOURCE_NAMES.join(', ')}, sponsor_ordinal, list_ordinal)
  SELECT ${SOURCE_NAMES.map((name) => `r.${name}`).join(', ')},
    coalesce(last.n, 0) + r.rn, coalesce(last.n, 0) + r.rn + coalesce(before.ordinal, 0)
  FROM (
    SELECT s.*, row_number() OVER (
      PARTITION BY s.sponsor ORDER BY s.block_height, s.microblock_sequence, s.tx_index, s.tx_id) AS rn
    FROM (${source}) AS s
  ) AS r
  LEFT JOIN LATERAL (
    SELECT x.sponsor_ordinal AS n FROM sponsor_txs x WHERE x.sponsor = r.sponsor
    ORDER BY x.sponsor_ordinal DESC LIMIT 1
  ) AS last ON true
  LEFT JOIN LATERAL (
    SELECT p.ordinal FROM principal_txs p
    WHERE p.principal = r.sponsor AND p.ordinal IS NOT NULL AND p.block_height <= r.block_height
      AND (p.block_height, p.microblock_sequence, p.tx_index) < (r.block_height, r.microblock_sequence, r.tx_index)
    ORDER BY p.block_height DESC, p.ordinal DESC LIMIT 1
  ) AS before ON true`;

const FROM_ARRAYS = numbered(`SELECT ${unnestSelectList(SOURCE_SPEC)}`);

const FROM_STORED = numbered(`
  SELECT t.sponsor_address AS sponsor, ${SOURCE_NAMES.filter((name) => name !== 'sponsor')
    .map((name) => `t.${name}`)
    .join(', ')}
  FROM txs t
  WHERE t.index_block_hash = ANY($1::text[]) AND t.sponsored
    AND NOT EXISTS (
      SELECT FROM principal_txs p
      WHERE p.tx_id = t.tx_id AND p.principal = t.sponsor_address AND p.index_block_hash = t.index_block_hash
        AND p.microblock_hash = t.microblock_hash)`);

/**
 * The sponsor rows of a new canonical block's rows in hand (its sponsored txs whose sponsor has no principal
 * index row of the tx), numbered; none sent when there are none.
 */
export function insertSponsorTxs(sql: TransactionSql, rows: ChainRows): Promise<unknown> {
  const parties = new Set(rows.principalTxs.map((p) => `${p.tx_id}|${p.microblock_hash}|${p.principal}`));
  const sponsorRows: SponsorRow[] = [];
  for (const tx of rows.txs) {
    if (!tx.sponsored || tx.sponsor_address === null) continue;
    if (parties.has(`${tx.tx_id}|${tx.microblock_hash}|${tx.sponsor_address}`)) continue;
    sponsorRows.push({
      sponsor: tx.sponsor_address,
      tx_id: tx.tx_id,
      index_block_hash: tx.index_block_hash,
      microblock_hash: tx.microblock_hash,
      block_height: tx.block_height,
      microblock_sequence: tx.microblock_sequence,
      tx_index: tx.tx_index,
    });
  }
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

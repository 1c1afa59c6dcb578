import type { TransactionSql } from '../db.js';
import type { EventRow } from '../schema/rows.js';
import { EventKind } from '../schema/codes.js';
import { columnSpec, nftCustodyColumns, type ColumnSpec, type RowOf } from '../schema/tables.js';
import { anchoredVisibleRow } from '../visibility.js';
import { columnArrays, PREPARED, unnestSelectList } from './bulk.js';

// Who holds each NFT (migration 035): the recipient of its latest canonical anchored NFT event, none after a
// burn. A new canonical block's NFT events are the latest of the NFTs they move, so it sets them from its rows
// in hand (`setCustodyFromRows`); a reorg (or a block read back) reads the latest event of every NFT its
// blocks' events move (`recomputeCustody`), once the blocks' flags are flipped. test/ingest/block-paths.test.ts
// proves the two equal.

/** A custody row to write: `owner` null when the NFT has no holder any more (its row is deleted). */
type CustodyRow = Omit<RowOf<typeof nftCustodyColumns>, 'owner'> & { owner: string | null };
const SPEC: ColumnSpec<CustodyRow> = columnSpec(nftCustodyColumns);
const NAMES = SPEC.map(([name]) => name);

/** The key of an NFT (the unique index of migration 035), of a row `alias`. */
const nftKey = (alias: string) => `${alias}.asset_identifier, md5(${alias}.value)`;

/**
 * Sets the custody of the NFTs of `latest` (a select of `NAMES`, one row per NFT, `owner` null when it has no
 * holder any more): rows without holder deleted, the others written over their NFT's row or added.
 */
const setCustody = (latest: string) => `
  WITH latest AS (${latest}),
  released AS (
    DELETE FROM nft_custody c USING latest l
    WHERE l.owner IS NULL AND c.asset_identifier = l.asset_identifier AND md5(c.value) = md5(l.value)
  )
  INSERT INTO nft_custody (${NAMES.join(', ')})
  SELECT ${NAMES.join(', ')} FROM latest WHERE owner IS NOT NULL
  ON CONFLICT (asset_identifier, md5(value)) DO UPDATE SET
    ${NAMES.filter((name) => name !== 'asset_identifier')
      .map((name) => `${name} = excluded.${name}`)
      .join(', ')}`;

const FROM_ARRAYS = setCustody(`SELECT ${unnestSelectList(SPEC)}`);

/** An NFT event with a key (a node always sends both; a row without one cannot be held). */
const NFT_EVENT = (alias: string) =>
  `${alias}.kind = ${EventKind.nftAsset} AND ${alias}.asset_identifier IS NOT NULL AND ${alias}.value IS NOT NULL`;

const FROM_STORED = setCustody(`
  SELECT k.asset_identifier, k.value, l.value_repr, l.owner, l.tx_id, l.index_block_hash, l.microblock_hash,
    l.block_height, l.microblock_sequence, l.tx_index, l.event_index
  FROM (
    SELECT DISTINCT e.asset_identifier, e.value FROM events e
    WHERE e.index_block_hash = ANY($1::text[]) AND ${NFT_EVENT('e')}
  ) AS k
  LEFT JOIN LATERAL (
    SELECT e.value_repr, e.recipient AS owner, e.tx_id, e.index_block_hash, e.microblock_hash, e.block_height,
      e.microblock_sequence, e.tx_index, e.event_index
    FROM events e
    WHERE ${NFT_EVENT('e')} AND (${nftKey('e')}) = (${nftKey('k')}) AND e.value = k.value
      AND ${anchoredVisibleRow('e')}
    ORDER BY e.block_height DESC, e.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
    LIMIT 1
  ) AS l ON true`);

/** Chain order of two events of one block. */
const later = (a: EventRow, b: EventRow) =>
  a.microblock_sequence - b.microblock_sequence || a.tx_index - b.tx_index || a.event_index - b.event_index;

/**
 * The custody of the NFTs a new canonical block's events move, from its rows in hand: each NFT's last event in
 * the block gives it to its recipient, or to no one (a burn). None sent when the block moves no NFT.
 */
export function setCustodyFromRows(sql: TransactionSql, events: readonly EventRow[]): Promise<unknown> {
  const last = new Map<string, EventRow>();
  for (const e of events) {
    if (e.kind !== EventKind.nftAsset || e.asset_identifier === null || e.value === null) continue;
    const key = `${e.asset_identifier}\n${e.value}`;
    const seen = last.get(key);
    if (!seen || later(e, seen) > 0) last.set(key, e);
  }
  if (last.size === 0) return Promise.resolve();
  const rows: CustodyRow[] = [...last.values()].map((e) => ({
    asset_identifier: e.asset_identifier!,
    value: e.value!,
    value_repr: e.value_repr ?? '',
    owner: e.recipient,
    tx_id: e.tx_id,
    index_block_hash: e.index_block_hash,
    microblock_hash: e.microblock_hash,
    block_height: e.block_height,
    microblock_sequence: e.microblock_sequence,
    tx_index: e.tx_index,
    event_index: e.event_index,
  }));
  return sql.unsafe(FROM_ARRAYS, columnArrays(sql, SPEC, rows), PREPARED).execute();
}

/**
 * The custody of every NFT the events of these blocks move, read again from the stored events (after a reorg
 * flipped the blocks, or for a block whose rows were read back).
 */
export function recomputeCustody(sql: TransactionSql, indexBlockHashes: string[]): Promise<unknown> {
  if (indexBlockHashes.length === 0) return Promise.resolve();
  return sql.unsafe(FROM_STORED, [indexBlockHashes], PREPARED).execute();
}

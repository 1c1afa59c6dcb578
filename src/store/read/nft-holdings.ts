import type { Sql } from '../db.js';
import { EventKind } from '../schema/codes.js';
import { statement } from '../statement.js';
import { unconfirmedStreamRow } from '../visibility.js';

// The NFTs a principal holds (docs/upstream.md C.15): the custody ingest keeps (migration 035), newest
// acquisition first; with `unanchored`, the unconfirmed microblock stream's NFT events applied on top (the
// latest of them moves an NFT). A page is read from the principal's custody rows by an index range in that
// order: bounded by the NFTs it holds, not by the chain.

export interface NftHolding {
  asset_identifier: string;
  /** the NFT's Clarity value, 0x-hex, and its repr */
  value: string;
  value_repr: string;
  /** where the event that gave it to the principal sits (its tx's row) */
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  block_height: number;
}

type Row = NftHolding & { total: string };

const COLUMNS = [
  'asset_identifier',
  'value',
  'value_repr',
  'tx_id',
  'index_block_hash',
  'microblock_hash',
  'block_height',
  'microblock_sequence',
  'tx_index',
  'event_index',
];
const columnsOf = (alias: string) => COLUMNS.map((c) => `${alias}.${c}`).join(', ');

/**
 * $1 the principal, $2 the asset identifiers to keep (null: all), $3 unanchored, $4 the limit, $5 the offset.
 * The stream's NFT events: the latest of each NFT it moves.
 */
const holdings = statement<
  Row,
  [principal: string, assets: string[] | null, unanchored: boolean, limit: number, offset: number]
>(`
  WITH stream AS (
    SELECT DISTINCT ON (e.asset_identifier, e.value) ${columnsOf('e')}, e.recipient FROM events e
    WHERE $3::boolean AND e.kind = ${EventKind.nftAsset} AND ${unconfirmedStreamRow('e')}
      AND e.asset_identifier IS NOT NULL AND e.value IS NOT NULL
    ORDER BY e.asset_identifier, e.value, e.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
  ),
  held AS (
    SELECT ${columnsOf('c')} FROM nft_custody c
    WHERE c.owner = $1 AND ($2::text[] IS NULL OR c.asset_identifier = ANY($2::text[]))
      AND NOT EXISTS (SELECT FROM stream s WHERE s.asset_identifier = c.asset_identifier AND s.value = c.value)
    UNION ALL
    SELECT ${columnsOf('s')} FROM stream s
    WHERE s.recipient = $1 AND ($2::text[] IS NULL OR s.asset_identifier = ANY($2::text[]))
  )
  SELECT h.*, count(*) OVER () AS total FROM held h
  ORDER BY h.block_height DESC, h.microblock_sequence DESC, h.tx_index DESC, h.event_index DESC
  LIMIT $4 OFFSET $5`);

export interface NftHoldingPage {
  /** how many NFTs the principal holds (of those assets); 0 on an empty page */
  total: number;
  holdings: NftHolding[];
}

/** A page of the NFTs a principal holds, newest acquisition first. One statement. */
export async function listNftHoldings(
  sql: Sql,
  principal: string,
  query: { assetIdentifiers: string[] | null; unanchored: boolean; limit: number; offset: number },
): Promise<NftHoldingPage> {
  const rows = await holdings(
    sql,
    principal,
    query.assetIdentifiers,
    query.unanchored,
    query.limit,
    query.offset,
  );
  return {
    total: rows.length > 0 ? Number(rows[0].total) : 0,
    holdings: rows.map((r) => ({
      asset_identifier: r.asset_identifier,
      value: r.value,
      value_repr: r.value_repr,
      tx_id: r.tx_id,
      index_block_hash: r.index_block_hash,
      microblock_hash: r.microblock_hash,
      block_height: r.block_height,
    })),
  };
}

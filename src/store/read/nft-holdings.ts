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

/** The principal's custody rows (`alias`) of the asset identifiers asked for ($2, null: all). */
const ownedBy = (alias: string) =>
  `${alias}.owner = $1 AND ($2::text[] IS NULL OR ${alias}.asset_identifier = ANY($2::text[]))`;

/** The order of a page, newest acquisition first: the order of the custody index read backwards. */
const NEWEST_FIRST = (alias: string) =>
  `${alias}.block_height DESC, ${alias}.microblock_sequence DESC, ${alias}.tx_index DESC, ${alias}.event_index DESC`;

/** The custody row of a page key (keys tie at block 1, docs/upstream.md "Ties": the tx id tells them apart). */
const KEY = ['tx_id', 'block_height', 'microblock_sequence', 'tx_index', 'event_index'];
const sameKey = (a: string, b: string) => KEY.map((c) => `${a}.${c} = ${b}.${c}`).join(' AND ');

/**
 * $1 the principal, $2 the asset identifiers to keep (null: all), $3 unanchored, $4 the limit, $5 the offset.
 *
 * The page and the total come from the custody index (migration 037: the principal's rows in page order, with
 * the asset identifier and tx id in its entries), read without the table: the page's keys by an index-only
 * walk of LIMIT/OFFSET, then only the page's rows from the table; the total by an index-only count. Counting
 * and sorting all of a holder's rows to cut a page cost its busiest holder (3,234 NFTs, 1M-tx chain) 4.2–5.4
 * ms of PostgreSQL a request (F-read-nft-holdings-whole-set).
 *
 * With `unanchored`, the stream's events (the latest of each NFT it moves; none without `unanchored`) sit
 * above the tip, so those received come first, then the custody rows the stream did not move: the custody
 * walk skips the moved rows and starts that many received rows earlier.
 */
const holdingsStatement = (readsStream: boolean) =>
  statement<
    Row,
    [principal: string, assets: string[] | null, unanchored: boolean, limit: number, offset: number]
  >(`
  WITH stream AS MATERIALIZED (
    SELECT DISTINCT ON (e.asset_identifier, e.value) ${columnsOf('e')}, e.recipient FROM events e
    WHERE $3::boolean AND ${readsStream} AND e.kind = ${EventKind.nftAsset} AND ${unconfirmedStreamRow('e')}
      AND e.asset_identifier IS NOT NULL AND e.value IS NOT NULL
    ORDER BY e.asset_identifier, e.value, e.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
  ),
  received AS MATERIALIZED (
    SELECT ${columnsOf('s')} FROM stream s
    WHERE s.recipient = $1 AND ($2::text[] IS NULL OR s.asset_identifier = ANY($2::text[]))
  ),
  moved AS MATERIALIZED (
    SELECT ${KEY.map((c) => `c.${c}`).join(', ')} FROM stream s
    JOIN nft_custody c ON c.asset_identifier = s.asset_identifier AND md5(c.value) = md5(s.value)
    WHERE ${ownedBy('c')}
  ),
  kept AS (
    SELECT ${KEY.map((c) => `c.${c}`).join(', ')} FROM nft_custody c
    WHERE ${ownedBy('c')} AND NOT EXISTS (SELECT FROM moved m WHERE ${sameKey('m', 'c')})
    ORDER BY ${NEWEST_FIRST('c')}
    LIMIT $4 OFFSET greatest($5 - (SELECT count(*) FROM received), 0)
  ),
  held AS (
    SELECT ${columnsOf('r')} FROM received r
    UNION ALL
    SELECT ${columnsOf('c')} FROM kept k JOIN nft_custody c ON c.owner = $1 AND ${sameKey('c', 'k')}
  )
  SELECT h.*,
    (SELECT count(*) FROM nft_custody c WHERE ${ownedBy('c')})
      - (SELECT count(*) FROM moved) + (SELECT count(*) FROM received) AS total
  FROM held h
  ORDER BY ${NEWEST_FIRST('h')}
  LIMIT $4 OFFSET least($5, (SELECT count(*) FROM received))`);

/**
 * The same statement twice: an anchored read's stream is `false` in its text, so its generic plan drops the
 * stream's events scan. With one text, that scan's cost (the `$3` that skips it is unknown to a generic plan)
 * made PostgreSQL plan every call anew, ~0.6 ms a request (F-read-nft-holdings-whole-set).
 */
const anchoredHoldings = holdingsStatement(false);
const unanchoredHoldings = holdingsStatement(true);

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
  const rows = await (query.unanchored ? unanchoredHoldings : anchoredHoldings)(
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

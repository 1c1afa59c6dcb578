import type { Sql } from '../db.js';
import { EventKind } from '../schema/codes.js';
import { statement } from '../statement.js';
import { canonicalRow, unconfirmedStreamRow } from '../visibility.js';
import {
  OWN_EVENTS_READ_MAX,
  readAccountTxParts,
  type AccountTxKey,
  type AccountTxParts,
} from './account-txs.js';
import { eventSelectList, type EventRecord } from './txs.js';

// An address's transactions, the v2 list (docs/upstream.md C.9), and its events in one of them (C.10). The v2
// list is the v1 list (the principal index, principal_txs) plus the txs the principal only sponsored
// (sponsor_txs, migration 034), newest first, the unconfirmed microblock stream's first. Its anchored part is
// numbered 1..n from the oldest: a sponsor row carries its number in it (`list_ordinal`), and a principal index
// row's is its ordinal plus the sponsor rows before it, so a range of the list is an index range of each.

const KEY = [
  'tx_id',
  'index_block_hash',
  'microblock_hash',
  'block_height',
  'microblock_sequence',
  'tx_index',
];
const keyOf = (alias: string) => KEY.map((c) => `${alias}.${c}`).join(', ');
const NEWEST_FIRST = 'microblock_sequence DESC, tx_index DESC, tx_id DESC';

type PositionRow = Omit<AccountTxKey, 'canonical' | 'microblock_canonical'> & {
  pos: string;
  total: string;
};

/**
 * The rows at positions $2..$3 of the principal's ($1) v2 list (0 the newest), with their positions and the
 * list's size. The unconfirmed rows come first; the anchored rows at positions p are those numbered
 * `anchored - (p - unconfirmed)`, found by the two index ranges that numbering gives.
 */
const listPositions = statement<PositionRow, [principal: string, from: number, to: number]>(`
  WITH unconfirmed AS (
    SELECT u.*, row_number() OVER (ORDER BY ${NEWEST_FIRST}) - 1 AS pos FROM (
      SELECT ${keyOf('p')} FROM principal_txs p WHERE p.principal = $1 AND ${unconfirmedStreamRow('p')}
      UNION ALL
      SELECT ${keyOf('t')} FROM txs t
      WHERE t.sponsored AND t.sponsor_address = $1 AND ${unconfirmedStreamRow('t')}
        AND NOT EXISTS (SELECT FROM principal_txs p WHERE p.tx_id = t.tx_id AND p.principal = $1
          AND p.index_block_hash = t.index_block_hash AND p.microblock_hash = t.microblock_hash)
    ) AS u
  ),
  counts AS (
    SELECT (SELECT count(*) FROM unconfirmed) AS unconfirmed,
      coalesce((SELECT s.tx_count FROM principal_stats s WHERE s.principal = $1), 0)
        + coalesce((SELECT x.sponsor_ordinal FROM sponsor_txs x WHERE x.sponsor = $1
          ORDER BY x.sponsor_ordinal DESC LIMIT 1), 0) AS anchored
  ),
  -- the anchored part of the positions asked, as numbers from the oldest (low..high)
  range AS (
    SELECT c.*, greatest(c.anchored - ($3 - c.unconfirmed), 1) AS low,
      c.anchored - greatest($2 - c.unconfirmed, 0) AS high
    FROM counts c
  ),
  -- the sponsor rows numbered below low, and up to high: the principal index ordinals are the numbers less these
  shift AS (
    SELECT r.*,
      coalesce((SELECT x.sponsor_ordinal FROM sponsor_txs x WHERE x.sponsor = $1 AND x.list_ordinal < r.low
        ORDER BY x.list_ordinal DESC LIMIT 1), 0) AS below,
      coalesce((SELECT x.sponsor_ordinal FROM sponsor_txs x WHERE x.sponsor = $1 AND x.list_ordinal <= r.high
        ORDER BY x.list_ordinal DESC LIMIT 1), 0) AS through
    FROM range r
  ),
  anchored AS (
    SELECT a.*, s.unconfirmed + (s.anchored - s.high)
      + row_number() OVER (ORDER BY a.block_height DESC, ${NEWEST_FIRST}) - 1 AS pos
    FROM shift s, LATERAL (
      SELECT ${keyOf('x')} FROM sponsor_txs x
      WHERE x.sponsor = $1 AND x.list_ordinal BETWEEN s.low AND s.high
      UNION ALL
      SELECT ${keyOf('p')} FROM principal_txs p
      WHERE p.principal = $1 AND p.ordinal BETWEEN s.low - s.below AND s.high - s.through
    ) AS a
    WHERE s.low <= s.high
  )
  SELECT c.unconfirmed + c.anchored AS total, l.*
  FROM counts c LEFT JOIN LATERAL (
    SELECT * FROM unconfirmed WHERE pos BETWEEN $2 AND $3
    UNION ALL
    SELECT * FROM anchored
  ) AS l ON true
  ORDER BY l.pos`);

/** Where a tx of the list sits: what a v2 cursor names (`<index_block_hash>:<microblock_sequence>:<tx_index>`). */
export type ListPosition = Pick<AccountTxKey, 'index_block_hash' | 'microblock_sequence' | 'tx_index'>;

export interface AddressTxPage {
  /** the size of the list; 0 on an empty page */
  total: number;
  /** the page's txs, each with the principal's transfers in it (last event first) */
  txs: AccountTxParts[];
  /** where the page's first tx, the first of the newer page (`limit` above) and of the older one sit */
  cursor: ListPosition | null;
  nextCursor: ListPosition | null;
  prevCursor: ListPosition | null;
}

/**
 * A page of the principal's v2 list of transactions (docs/upstream.md C.9): its v1 list's and the ones it
 * sponsored, newest first, with its transfers in each, and the positions the cursors name (the txs `limit`
 * above and below the page's first). The positions are read from `offset - limit` to `offset + limit`: index
 * ranges whatever the offset.
 */
export async function listAddressTransactions(
  sql: Sql,
  principal: string,
  page: { limit: number; offset: number },
): Promise<AddressTxPage> {
  const { limit, offset } = page;
  const rows = await listPositions(sql, principal, Math.max(0, offset - limit), offset + limit);
  const at = new Map<number, PositionRow>();
  for (const row of rows) if (row.tx_id != null) at.set(Number(row.pos), row);
  const keys: AccountTxKey[] = [];
  for (let pos = offset; pos < offset + limit; pos++) {
    const row = at.get(pos);
    if (row) keys.push({ ...keyFields(row), canonical: true, microblock_canonical: true });
  }
  if (keys.length === 0) return { total: 0, txs: [], cursor: null, nextCursor: null, prevCursor: null };
  const position = (pos: number): ListPosition | null => {
    const row = at.get(pos);
    return row
      ? {
          index_block_hash: row.index_block_hash,
          microblock_sequence: row.microblock_sequence,
          tx_index: row.tx_index,
        }
      : null;
  };
  return {
    total: Number(rows[0].total),
    txs: await readAccountTxParts(sql, principal, keys),
    cursor: position(offset),
    nextCursor: offset - limit >= 0 ? position(offset - limit) : null,
    prevCursor: position(offset + limit),
  };
}

function keyFields(row: PositionRow): Omit<AccountTxKey, 'canonical' | 'microblock_canonical'> {
  return {
    tx_id: row.tx_id,
    index_block_hash: row.index_block_hash,
    microblock_hash: row.microblock_hash,
    block_height: row.block_height,
    microblock_sequence: row.microblock_sequence,
    tx_index: row.tx_index,
  };
}

/** An event of a tx that a principal sent or received (an STX, FT or NFT event). */
export type AddressTxEvent = Pick<
  EventRecord,
  | 'event_index'
  | 'kind'
  | 'asset_event_type'
  | 'sender'
  | 'recipient'
  | 'amount'
  | 'asset_identifier'
  | 'value'
  | 'value_repr'
>;

const EVENT_FIELDS = eventSelectList([
  'event_index',
  'kind',
  'asset_event_type',
  'sender',
  'recipient',
  'amount',
  'asset_identifier',
  'value',
  'value_repr',
]);

type EventsRow = Partial<AddressTxEvent> & { found: boolean; total: string };

const PARTY_KINDS = `e.kind IN (${EventKind.stxAsset}, ${EventKind.ftAsset}, ${EventKind.nftAsset})`;

/**
 * $1 the principal, $2 the tx id, $3 the limit, $4 the offset. The tx's canonical row; its events the
 * principal sent or received, read from the tx's own events when it has at most OWN_EVENTS_READ_MAX, else
 * from the principal's events at its height (the genesis tx has ~10,000).
 */
const addressTxEvents = statement<
  EventsRow,
  [principal: string, txId: string, limit: number, offset: number]
>(`
  WITH tx AS (
    SELECT t.tx_id, t.index_block_hash, t.microblock_hash, t.block_height, t.event_count FROM txs t
    WHERE t.tx_id = $2 AND ${canonicalRow('t')}
    ORDER BY t.block_height DESC LIMIT 1
  ),
  listed AS (
    SELECT e.* FROM tx, LATERAL (
      SELECT ${EVENT_FIELDS} FROM events e
      WHERE tx.event_count <= ${OWN_EVENTS_READ_MAX} AND e.tx_id = tx.tx_id
        AND e.index_block_hash = tx.index_block_hash AND e.microblock_hash = tx.microblock_hash
        AND (e.sender = $1 OR e.recipient = $1) AND ${PARTY_KINDS}
      UNION ALL
      SELECT ${EVENT_FIELDS} FROM events e
      WHERE tx.event_count > ${OWN_EVENTS_READ_MAX} AND e.sender = $1 AND e.block_height = tx.block_height
        AND e.tx_id = tx.tx_id AND e.index_block_hash = tx.index_block_hash
        AND e.microblock_hash = tx.microblock_hash AND ${PARTY_KINDS}
      UNION ALL
      SELECT ${EVENT_FIELDS} FROM events e
      WHERE tx.event_count > ${OWN_EVENTS_READ_MAX} AND e.recipient = $1 AND e.sender IS DISTINCT FROM $1
        AND e.block_height = tx.block_height AND e.tx_id = tx.tx_id AND e.index_block_hash = tx.index_block_hash
        AND e.microblock_hash = tx.microblock_hash AND ${PARTY_KINDS}
    ) AS e
  )
  SELECT EXISTS (SELECT FROM txs WHERE tx_id = $2) AS found, (SELECT count(*) FROM listed) AS total, p.*
  FROM (SELECT 1) AS one
  LEFT JOIN LATERAL (SELECT * FROM listed ORDER BY event_index LIMIT $3 OFFSET $4) AS p ON true
  ORDER BY p.event_index`);

export interface AddressTxEventPage {
  /** whether any row of the tx is stored, canonical or not */
  found: boolean;
  /** how many such events its canonical row holds; 0 on an empty page */
  total: number;
  events: AddressTxEvent[];
}

/**
 * The STX, FT and NFT events of a tx's canonical row (unconfirmed microblock txs included) that a principal
 * sent or received, by event index (docs/upstream.md C.10). One statement.
 */
export async function listAddressTxEvents(
  sql: Sql,
  principal: string,
  txId: string,
  page: { limit: number; offset: number },
): Promise<AddressTxEventPage> {
  const rows = await addressTxEvents(sql, principal, txId, page.limit, page.offset);
  const events = rows
    .filter((r) => r.event_index != null)
    .map(({ found: _found, total: _total, ...event }) => event as AddressTxEvent);
  return { found: rows[0].found, total: events.length > 0 ? Number(rows[0].total) : 0, events };
}

import type { Sql } from '../db.js';
import { type PrincipalTxRow } from '../schema/rows.js';
import { EventKind } from '../schema/codes.js';
import { scopeWindow, type AccountScope } from './account-scope.js';
import {
  eventSelectList,
  findMinedTxByKey,
  findMinedTxsByKey,
  minedRecordOf,
  minedRowColumns,
  rowKeyId,
  type EventRecord,
  type MinedTxByKeyReader,
  type MinedTxRecord,
  type MinedTxRowKey,
} from './txs.js';
import { canonicalRow, unconfirmedStreamRow } from '../visibility.js';
import { statement } from '../statement.js';
import { batchedReads, distinctKeys } from './batched.js';

// A principal's transactions (docs/upstream.md A.8, A.9), newest first: those it sent, received a token
// transfer in, called or deployed as a contract, or took part in as a party of an STX/FT/NFT event. They come
// from the principal index (principal_txs): its running ordinal numbers the anchored ones 1..n in chain order,
// so a page at any offset is an index range, and the count of a scope is the ordinal at its height.

/**
 * Where a transaction sits (the exact key of its `txs` row), with the principal index row's visibility flags
 * (those of the `txs` row) as the listing read them.
 */
export type AccountTxKey = Omit<PrincipalTxRow, 'principal'>;

export interface AccountTxPage {
  total: number;
  keys: AccountTxKey[];
}

/** The fields of an event that a transfer carries. */
const TRANSFER_EVENT_FIELDS = [
  'event_index',
  'kind',
  'sender',
  'recipient',
  'amount',
  'asset_identifier',
  'value',
  'value_repr',
] as const;

/** A transfer of the principal: an STX, FT or NFT event, with the key of its tx's row. */
export type TransferRecord = MinedTxRowKey & Pick<EventRecord, (typeof TRANSFER_EVENT_FIELDS)[number]>;

const KEY_COLUMNS = [
  'tx_id',
  'index_block_hash',
  'microblock_hash',
  'block_height',
  'microblock_sequence',
  'tx_index',
  'canonical',
  'microblock_canonical',
];
const keyColumns = (alias: string) => KEY_COLUMNS.map((c) => `${alias}.${c}`).join(', ');

// The statements below are built once, at load (store/statement.ts): $1 is always the principal.

type PageRow = Partial<AccountTxKey> & { total: string; pos: string | null };

/**
 * A page of `listAccountTxs` ($2 the offset, $3 the offset + limit): the unconfirmed rows of the page, then
 * the anchored ones by ordinal range, `anchoredCount` (a scalar subquery) being how many the scope holds.
 */
const pageText = (anchoredCount: string, withUnconfirmed: boolean) => `
  WITH unconfirmed AS (
    ${
      withUnconfirmed
        ? `SELECT ${keyColumns('p')},
             row_number() OVER (ORDER BY p.microblock_sequence DESC, p.tx_index DESC) - 1 AS pos
           FROM principal_txs p WHERE p.principal = $1 AND ${unconfirmedStreamRow('p')}`
        : `SELECT ${keyColumns('p')}, 0::bigint AS pos FROM principal_txs p WHERE false`
    }
  ),
  counts AS (
    SELECT coalesce((${anchoredCount}), 0)::bigint AS n, (SELECT count(*) FROM unconfirmed) AS u
  )
  SELECT (counts.n + counts.u) AS total, page.*
  FROM counts LEFT JOIN LATERAL (
    SELECT * FROM unconfirmed u WHERE u.pos >= $2 AND u.pos < $3
    UNION ALL
    SELECT ${keyColumns('p')}, counts.u + counts.n - p.ordinal AS pos
    FROM principal_txs p
    WHERE p.principal = $1 AND p.ordinal > counts.n + counts.u - $3 AND p.ordinal <= counts.n + counts.u - $2
  ) AS page ON true
  ORDER BY page.pos`;

const TIP_COUNT = 'SELECT tx_count FROM principal_stats WHERE principal = $1';
/** n at a past height ($4): the ordinal of the principal's last anchored tx at or below it. */
const COUNT_AT_HEIGHT = `SELECT ordinal FROM principal_txs
  WHERE principal = $1 AND ordinal IS NOT NULL AND block_height <= $4
  ORDER BY block_height DESC, ordinal DESC LIMIT 1`;

type PageParams = [principal: string, offset: number, end: number];
const pageAtTipUnanchored = statement<PageRow, PageParams>(pageText(TIP_COUNT, true));
const pageAtTip = statement<PageRow, PageParams>(pageText(TIP_COUNT, false));
const pageAtHeight = statement<PageRow, [...PageParams, maxHeight: number]>(pageText(COUNT_AT_HEIGHT, false));

/**
 * One page of the principal's transactions at a scope, in (height, microblock sequence, tx index) order,
 * newest first, and how many there are in all. The unconfirmed microblock txs of an `unanchored` read come
 * first; the anchored ones are read by ordinal range. One statement: the count and the page agree.
 */
export async function listAccountTxs(
  sql: Sql,
  principal: string,
  scope: AccountScope,
  page: { limit: number; offset: number },
): Promise<AccountTxPage> {
  const window = scopeWindow(scope);
  const { offset, limit } = page;
  const rows = !window.current
    ? await pageAtHeight(sql, principal, offset, offset + limit, window.maxHeight)
    : window.unconfirmed
      ? await pageAtTipUnanchored(sql, principal, offset, offset + limit)
      : await pageAtTip(sql, principal, offset, offset + limit);
  const total = rows.length > 0 ? Number(rows[0].total) : 0;
  const keys = rows.filter((r) => r.tx_id !== null && r.tx_id !== undefined).map(toKey);
  return { total, keys };
}

const atHeight = statement<AccountTxKey, [principal: string, height: number]>(`
  SELECT ${keyColumns('p')} FROM principal_txs p
  WHERE p.principal = $1 AND p.block_height = $2 AND ${canonicalRow('p')}
  ORDER BY p.microblock_sequence DESC, p.tx_index DESC`);

/**
 * Every transaction of the principal mined at one height, newest first. Unconfirmed microblock txs
 * (height tip+1) are included whatever `unanchored` says, as upstream does.
 */
export async function listAccountTxsAtHeight(
  sql: Sql,
  principal: string,
  height: number,
): Promise<AccountTxPage> {
  const rows = await atHeight(sql, principal, height);
  return { total: rows.length, keys: rows.map(toKey) };
}

/** The columns of a transfer (without, then with its tx's key), from events `e`. */
const TRANSFER_FIELDS = eventSelectList(TRANSFER_EVENT_FIELDS);
const TRANSFER_COLUMNS = `e.tx_id, e.index_block_hash, e.microblock_hash, ${TRANSFER_FIELDS}`;
/** Events `e` in which the principal (an SQL expression) sends or receives STX, a fungible or a non-fungible token. */
const transferOfPrincipal = (principal: string) => `(e.sender = ${principal} OR e.recipient = ${principal})
  AND e.kind IN (${EventKind.stxAsset}, ${EventKind.ftAsset}, ${EventKind.nftAsset})`;
const TRANSFER_OF_PRINCIPAL = transferOfPrincipal('$1');

const transfersAtHeights = statement<
  TransferRecord,
  [
    principal: string,
    heights: number[],
    txIds: string[],
    indexBlockHashes: string[],
    microblockHashes: string[],
  ]
>(`
  SELECT e.*
  FROM unnest($2::int[]) AS h(block_height)
  CROSS JOIN LATERAL (
    SELECT ${TRANSFER_COLUMNS}
    FROM events e
    WHERE ${TRANSFER_OF_PRINCIPAL} AND e.block_height = h.block_height
    OFFSET 0
  ) AS e
  JOIN unnest($3::text[], $4::text[], $5::text[]) AS k(tx_id, index_block_hash, microblock_hash)
    ON k.tx_id = e.tx_id AND k.index_block_hash = e.index_block_hash AND k.microblock_hash = e.microblock_hash
  ORDER BY e.event_index DESC`);

/**
 * A tx with at most this many events has the principal's transfers in it read from its own events (a
 * primary-key range of at most this many rows) rather than from the principal's events at its height: a busy
 * principal has ~40 events at a height on the 10k-tx chain (19 buffers, 0.5 ms of PostgreSQL per read; bench
 * finding F-read-own-events-transfers), while its txs have 1–3 each. A tx with more (the boot address's
 * genesis tx: ~10,000) is read by height, bounded by the principal's events there.
 * @internal exported for its tests
 */
export const OWN_EVENTS_READ_MAX = 64;

/**
 * A row of `accountTxRows`: the tx's key and event count, with one transfer of the principal or none; read
 * `withRow`, the tx's mined row too (`minedRowColumns`: the key and event count are then its columns).
 */
export type AccountTxTransferRow = AccountTxKey & { event_count: number } & Partial<TransferRecord> &
  Partial<Omit<MinedTxRecord, 'events'>>;

/**
 * The canonical row of a tx the principal takes part in (unconfirmed microblock txs included), with its
 * number of events and, when that is at most OWN_EVENTS_READ_MAX, the principal's transfers in it read from
 * its own events (a primary-key range): one row per transfer, or one with no transfer fields; none when the
 * principal takes no part in such a tx. `principal` and `txId` are SQL expressions: the parameters of the
 * single statement, or the columns of a pair of the many-pairs one. Its rows come in `TRANSFERS_ORDER`.
 *
 * `withRow`: each row also carries the tx's mined row (no events), from the `txs` row the statement reads
 * anyway for the event count; its key columns are then that row's, the same values as the principal index
 * row's (the join is on the key, and both rows' flags are flipped together: write/blocks.ts
 * setBlocksCanonical, write/microblocks.ts). For a tx whose rendering is not kept, this saves the second
 * statement (`findMinedTxByKey`) and its round trip.
 */
const accountTxWithTransfersOf = (principal: string, txId: string, withRow: boolean) => `
  SELECT k.*, e.*
  FROM (
    SELECT ${withRow ? minedRowColumns('t') : `${keyColumns('p')}, t.event_count`} FROM principal_txs p
    JOIN txs t ON t.tx_id = p.tx_id AND t.index_block_hash = p.index_block_hash
      AND t.microblock_hash = p.microblock_hash
    WHERE p.principal = ${principal} AND p.tx_id = ${txId} AND ${canonicalRow('p')}
    ORDER BY p.block_height DESC LIMIT 1
  ) AS k
  LEFT JOIN LATERAL (
    SELECT ${TRANSFER_FIELDS} FROM events e
    WHERE e.tx_id = k.tx_id AND e.index_block_hash = k.index_block_hash AND e.microblock_hash = k.microblock_hash
      AND ${transferOfPrincipal(principal)} AND k.event_count <= ${OWN_EVENTS_READ_MAX}
  ) AS e ON true`;
/** The order of one tx's transfers (a column of `accountTxWithTransfersOf`'s rows): last event first. */
const TRANSFERS_ORDER = (alias: string) => `${alias}.event_index DESC`;

/** `accountTxWithTransfersOf` for one (principal $1, tx $2): the key and transfers in one round trip. */
const accountTxWithTransfersText = (withRow: boolean) =>
  `${accountTxWithTransfersOf('$1', '$2', withRow)} ORDER BY ${TRANSFERS_ORDER('e')}`;
const accountTxWithTransfers = statement<AccountTxTransferRow, [principal: string, txId: string]>(
  accountTxWithTransfersText(false),
);
const accountTxWithTransfersAndRow = statement<AccountTxTransferRow, [principal: string, txId: string]>(
  accountTxWithTransfersText(true),
);

/**
 * `accountTxWithTransfersOf` for many (principal, tx) pairs ($1, $2: two arrays of one length), each read by
 * the same subquery (LATERAL); `ord` (1-based) says which pair a row answers, pairs in order.
 */
const accountTxsWithTransfersText = (withRow: boolean) => `
  SELECT a.ord, r.*
  FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS a(principal, tx_id, ord)
  CROSS JOIN LATERAL (${accountTxWithTransfersOf('a.principal', 'a.tx_id', withRow)}) AS r
  ORDER BY a.ord, ${TRANSFERS_ORDER('r')}`;
type ManyPairsRow = AccountTxTransferRow & { ord: string };
const accountTxsWithTransfers = statement<ManyPairsRow, [principals: string[], txIds: string[]]>(
  accountTxsWithTransfersText(false),
);
const accountTxsWithTransfersAndRows = statement<ManyPairsRow, [principals: string[], txIds: string[]]>(
  accountTxsWithTransfersText(true),
);

/**
 * The rows of `accountTxWithTransfersOf` for one (principal, tx): one statement.
 * @internal exported for its tests
 */
export function accountTxRows(
  sql: Sql,
  principal: string,
  txId: string,
  withRow = false,
): Promise<AccountTxTransferRow[]> {
  return (withRow ? accountTxWithTransfersAndRow : accountTxWithTransfers)(sql, principal, txId);
}

/**
 * `accountTxRows` as a function, for reads that may be answered together (`batchedAccountTxReads`: the rows of
 * a batch also carry `ord`, which pair of the batch they answer).
 */
export type AccountTxRowsReader = (
  principal: string,
  txId: string,
  withRow?: boolean,
) => Promise<AccountTxTransferRow[]>;

/**
 * `accountTxRows` for reads that arrive together (store/read/batched.ts): the (principal, tx) pairs asked
 * within one turn are read by one statement, `accountTxsWithTransfers` (the same subquery per pair), a read
 * alone in its turn by `accountTxRows`'s own. The rows are the same (test/api/batched-account-tx-reads.test.ts
 * compares both for every pair of recorded chains). Why: the first statement of a cold
 * `/address/:principal/:tx_id/with_transfers` is one per request; on the 1M-tx chain that case cost 100 µs of
 * API and 54 µs of PostgreSQL CPU per request, a statement's fixed costs being a large part.
 */
export function batchedAccountTxReads(sqlOf: () => Sql): AccountTxRowsReader {
  interface Ask {
    principal: string;
    txId: string;
    withRow: boolean;
  }
  const pairId = (a: Ask) => `${a.principal}|${a.txId}`;
  const read = batchedReads<Ask, AccountTxTransferRow[]>(
    ({ withRow }) => String(withRow),
    ({ principal, txId, withRow }) => accountTxRows(sqlOf(), principal, txId, withRow),
    async (asks) => {
      const pairs = distinctKeys(asks, pairId);
      const many = asks[0].withRow ? accountTxsWithTransfersAndRows : accountTxsWithTransfers;
      const rows = await many(
        sqlOf(),
        pairs.map((p) => p.principal),
        pairs.map((p) => p.txId),
      );
      const rowsOfPair: AccountTxTransferRow[][] = pairs.map(() => []);
      // the rows as read, `ord` left on them: copying a row without it (`{ ord, ...row }`) cost more than the
      // rest of this function, ~1.6% of the API's samples with the mined row's 45 columns (bench/profile-http.ts,
      // 1M chain)
      for (const row of rows) rowsOfPair[Number(row.ord) - 1].push(row);
      const byId = new Map(pairs.map((p, i) => [pairId(p), rowsOfPair[i]]));
      // each read its own array: a caller may keep or change what it is given
      return asks.map((a) => [...byId.get(pairId(a))!]);
    },
  );
  return (principal, txId, withRow = false) => read({ principal, txId, withRow });
}

/**
 * The STX, FT and NFT events of these txs in which the principal sends or receives, last event first.
 * Read per block height of the page (through the sender and recipient indexes, both keyed by principal and
 * height), then matched to the txs: bounded by the principal's events at those heights whatever the plan.
 * Reading all of the principal's events then keeping those of the page (the generic plan's choice) cost
 * ~2,000 events on the 10k-tx chain's busiest account and 200,000 on the 1M-tx one; reading all events of
 * each tx instead cost ~10,000 for the boot address's one genesis tx. `OFFSET 0` keeps the per-height
 * subquery from being flattened into a join.
 * @internal exported for its tests
 */
export function findTransfers(sql: Sql, principal: string, keys: AccountTxKey[]): Promise<TransferRecord[]> {
  if (keys.length === 0) return Promise.resolve([]);
  return transfersAtHeights(
    sql,
    principal,
    [...new Set(keys.map((k) => k.block_height))],
    keys.map((k) => k.tx_id),
    keys.map((k) => k.index_block_hash),
    keys.map((k) => k.microblock_hash),
  );
}

function toKey(row: Partial<AccountTxKey>): AccountTxKey {
  return {
    tx_id: row.tx_id!,
    index_block_hash: row.index_block_hash!,
    microblock_hash: row.microblock_hash!,
    block_height: row.block_height!,
    microblock_sequence: row.microblock_sequence!,
    tx_index: row.tx_index!,
    canonical: row.canonical!,
    microblock_canonical: row.microblock_canonical!,
  };
}

/** What `readAccountTxParts` found of one key: its mined row unless skipped, and the principal's transfers. */
export interface AccountTxParts {
  key: AccountTxKey;
  /** null when the caller said it had the row already (`skipRow`) */
  tx: MinedTxRecord | null;
  /** the principal's transfers in it, last event first */
  transfers: TransferRecord[];
}

/**
 * The mined rows (without events) and the principal's transfers of these txs, in the keys' order; the rows
 * of the keys `skipRow` names are not read (the caller has what it needs of them). A row a concurrent block
 * removed meanwhile (a confirmed microblock's staged copy) is left out.
 */
export async function readAccountTxParts(
  sql: Sql,
  principal: string,
  keys: AccountTxKey[],
  skipRow: (key: AccountTxKey) => boolean = () => false,
): Promise<AccountTxParts[]> {
  if (keys.length === 0) return [];
  const toRead = keys.filter((k) => !skipRow(k));
  const [txs, transfers] = await Promise.all([
    findMinedTxsByKey(sql, toRead, null),
    findTransfers(sql, principal, keys),
  ]);
  const txById = new Map<string, MinedTxRecord>();
  for (const t of txs) txById.set(rowKeyId(t), t);
  const transfersById = new Map<string, TransferRecord[]>();
  for (const t of transfers) {
    const id = rowKeyId(t);
    const list = transfersById.get(id);
    if (list) list.push(t);
    else transfersById.set(id, [t]);
  }
  const parts: AccountTxParts[] = [];
  const read = new Set(toRead);
  for (const key of keys) {
    const id = rowKeyId(key);
    const tx = txById.get(id);
    if (tx || !read.has(key)) parts.push({ key, tx: tx ?? null, transfers: transfersById.get(id) ?? [] });
  }
  return parts;
}

/** How `readAccountTx` reads its statements that may be answered together with other requests'. */
export interface AccountTxReaders {
  /** its first statement (default: `accountTxRows`; the route passes `batchedAccountTxReads`'s) */
  rows?: AccountTxRowsReader;
  /** the mined row, unless skipped (default: `findMinedTxByKey`; the route passes `batchedMinedTxReadsByKey`'s) */
  minedTx?: MinedTxByKeyReader;
  /**
   * Read the mined row with the first statement (`accountTxRows` `withRow`) instead of by `minedTx` after it:
   * for a caller that expects `skipRow` to say no (it holds no rendering of the tx), one statement instead of
   * two. The row is not used when `skipRow` says yes after all.
   */
  rowWithKey?: boolean;
}

/**
 * One tx of the principal by id (its canonical row; unconfirmed microblock txs included): its mined row unless
 * `skipRow` says the caller has it, and the principal's transfers in it, last event first (the rows
 * `findTransfers` gives for its key: read from the tx's own events when it has few, else by height).
 * Undefined when the principal takes no part in such a tx (or a concurrent block removed the row meanwhile).
 */
export async function readAccountTx(
  sql: Sql,
  principal: string,
  txId: string,
  skipRow: (key: AccountTxKey) => boolean = () => false,
  readers: AccountTxReaders = {},
): Promise<AccountTxParts | undefined> {
  const {
    rows: readRows = (p, t, withRow) => accountTxRows(sql, p, t, withRow),
    minedTx: readMinedTx = (k) => findMinedTxByKey(sql, k, null),
    rowWithKey = false,
  } = readers;
  const rows = await readRows(principal, txId, rowWithKey);
  if (rows.length === 0) return undefined;
  const key = toKey(rows[0]);
  const ownEvents = rows[0].event_count <= OWN_EVENTS_READ_MAX;
  const skip = skipRow(key);
  const [tx, transfers] = await Promise.all([
    skip ? null : rowWithKey ? minedRecordOf(rows[0] as Omit<MinedTxRecord, 'events'>) : readMinedTx(key),
    ownEvents ? transfersOfRows(key, rows) : findTransfers(sql, principal, [key]),
  ]);
  if (!skip && !tx) return undefined;
  return { key, tx: tx ?? null, transfers };
}

function transfersOfRows(key: AccountTxKey, rows: AccountTxTransferRow[]): TransferRecord[] {
  return rows
    .filter((r) => r.event_index !== null && r.event_index !== undefined)
    .map((r) => ({
      tx_id: key.tx_id,
      index_block_hash: key.index_block_hash,
      microblock_hash: key.microblock_hash,
      event_index: r.event_index!,
      kind: r.kind!,
      sender: r.sender ?? null,
      recipient: r.recipient ?? null,
      amount: r.amount ?? null,
      asset_identifier: r.asset_identifier ?? null,
      value: r.value ?? null,
      value_repr: r.value_repr ?? null,
    }));
}

import type { Sql } from '../db.js';
import { MempoolStatus } from '../schema/codes.js';
import { statement } from '../statement.js';
import { answersByKey, batchedReads, distinctKeys } from './batched.js';
import type { MempoolTxRow, TxRow } from '../schema/rows.js';
import { decodedTxColumns, txColumns } from '../schema/tables.js';
import { canonicalRow, unconfirmedRow, visibleRow, type Visibility } from '../visibility.js';

const MAX_INT = 2_147_483_647;

// Reads of transactions: mined rows (with their events, page by page) and mempool rows.

/**
 * Columns of a stored tx that its records leave out: the bytes (`raw_tx`, `tx_size`: read by their own
 * endpoint), the payload's fields kept apart for indexes (the renderer reads them from `payload`), and the
 * parent's index block hash. Every other column of `txs` and `mempool_txs` (schema/tables.ts) is read.
 */
const NOT_IN_RECORDS = [
  'raw_tx',
  'tx_size',
  'token_transfer_recipient',
  'token_transfer_amount',
  'contract_call_contract_id',
  'smart_contract_contract_id',
  'parent_index_block_hash',
] as const;
type NotInRecords = (typeof NOT_IN_RECORDS)[number];

const recordColumns = <Name extends string>(columns: Record<Name, unknown>) =>
  (Object.keys(columns) as Name[]).filter(
    (name): name is Exclude<Name, NotInRecords> => !(NOT_IN_RECORDS as readonly string[]).includes(name),
  );

/** The decoded columns mined and mempool records share. */
const DECODED_COLUMNS = recordColumns(decodedTxColumns);
/** The columns of a mined record (`MinedTxRecord` without `function_abi` and `events`). */
const MINED_COLUMNS = recordColumns(txColumns);

/** For contract calls: the called function's entry of the contract ABI, when the contract is known. */
interface FunctionAbi {
  function_abi: unknown;
}

export type MinedTxRecord = Pick<TxRow, (typeof MINED_COLUMNS)[number]> &
  FunctionAbi & {
    /** The requested page of the tx's events (empty when none was asked). */
    events: EventRecord[];
  };

export type MempoolTxRecord = Pick<
  MempoolTxRow,
  (typeof DECODED_COLUMNS)[number] | 'status' | 'replaced_by_tx_id' | 'receipt_time'
> &
  FunctionAbi;

export interface EventRecord {
  event_index: number;
  kind: number;
  asset_event_type: number | null;
  sender: string | null;
  recipient: string | null;
  amount: string | null;
  asset_identifier: string | null;
  value: string | null;
  value_repr: string | null;
  memo: string | null;
  contract_id: string | null;
  topic: string | null;
  locked_address: string | null;
  unlock_height: number | null;
}

/** Events with `event_offset <= event_index < event_offset + event_limit` (upstream pages by index). */
export interface EventPage {
  offset: number;
  limit: number;
}

// Each statement's text is built once, when this module loads, from the column lists and the subqueries
// below and from the visibility rule (store/statement.ts says why flat, prepared text).

/** The columns of an event (`EventRecord`) and the SQL expression giving each. */
const EVENT_FIELDS: Record<keyof EventRecord, string> = {
  event_index: 'e.event_index',
  kind: 'e.kind',
  asset_event_type: 'e.asset_event_type',
  sender: 'e.sender',
  recipient: 'e.recipient',
  amount: 'e.amount::text',
  asset_identifier: 'e.asset_identifier',
  value: 'e.value',
  value_repr: 'e.value_repr',
  memo: 'e.memo',
  contract_id: 'e.contract_id',
  topic: 'e.topic',
  locked_address: 'e.locked_address',
  unlock_height: 'e.unlock_height',
};

/** A select list of these fields of events `e`: each field's expression (`EVENT_FIELDS`), named as the field. */
export const eventSelectList = (fields: readonly (keyof EventRecord)[]) =>
  fields
    .map((field) =>
      EVENT_FIELDS[field] === `e.${field}` ? EVENT_FIELDS[field] : `${EVENT_FIELDS[field]} AS ${field}`,
    )
    .join(', ');

const columnsOf = (alias: string, columns: readonly string[]) =>
  columns.map((c) => `${alias}.${c}`).join(', ');

/** The called function's ABI entry, from the contract's deployment (canonical preferred). */
const functionAbi = (alias: string) => `
  (SELECT jsonb_path_query_first(s.abi, '$.functions[*] ? (@.name == $name)',
      jsonb_build_object('name', ${alias}.payload -> 'contract_call' ->> 'function_name'))
    FROM smart_contracts s
    WHERE s.contract_id = ${alias}.contract_call_contract_id AND s.abi IS NOT NULL
    ORDER BY s.canonical DESC, s.block_height DESC LIMIT 1) AS function_abi`;

/**
 * The tx's events with `from <= event_index < to` (SQL text of two integer parameters), as a JSON array. An
 * empty range reads nothing: the lists read their rows without events, and probing the events index for an
 * empty range was 200 of the ~560 buffers of a 50-tx page (bench finding F-read-rows-without-events).
 */
const eventsOf = (alias: string, from: string, to: string) => `
  CASE WHEN ${from}::integer < ${to}::integer THEN
  (SELECT coalesce(json_agg(json_build_object(${Object.entries(EVENT_FIELDS)
    .map(([name, expression]) => `'${name}', ${expression}`)
    .join(', ')}) ORDER BY e.event_index), '[]'::json)
    FROM events e
    WHERE e.tx_id = ${alias}.tx_id AND e.index_block_hash = ${alias}.index_block_hash
      AND e.microblock_hash = ${alias}.microblock_hash
      AND e.event_index >= ${from}::integer AND e.event_index < ${to}::integer)
  ELSE '[]'::json END AS events`;

/** The columns of a mined row `alias` without its events: `MinedTxRecord` but `events` (`minedRecordOf`). */
export const minedRowColumns = (alias: string) => `${columnsOf(alias, MINED_COLUMNS)}, ${functionAbi(alias)}`;

/** The SELECT list of a mined row, its events paged by the parameters `from` and `to`. */
const minedSelect = (from: string, to: string) =>
  `SELECT ${minedRowColumns('t')}, ${eventsOf('t', from, to)}`;

/**
 * The record (no events) of a row read with `minedRowColumns` among other columns: what `findMinedTxByKey`
 * gives for its key with no event page.
 */
export function minedRecordOf(
  row: Pick<MinedTxRecord, (typeof MINED_COLUMNS)[number] | 'function_abi'>,
): MinedTxRecord {
  const record: Record<string, unknown> = {};
  for (const column of MINED_COLUMNS) record[column] = row[column];
  record.function_abi = row.function_abi;
  record.events = [];
  return record as unknown as MinedTxRecord;
}

/** Event bounds of a page as statement parameters: [from, to); no page reads none. */
function eventBounds(page: EventPage | null): [number, number] {
  if (page === null || page.limit <= 0) return [0, 0];
  return [page.offset, Math.min(page.offset + page.limit, MAX_INT)];
}

const minedTxById = statement<MinedTxRecord, [txId: string, unanchored: boolean, from: number, to: number]>(
  `${minedSelect('$3', '$4')} FROM txs t WHERE t.tx_id = $1 AND ${visibleRow('t', '$2')} LIMIT 1`,
);

const minedTxsByIds = statement<
  MinedTxRecord,
  [txIds: string[], unanchored: boolean, maxHeight: number, from: number, to: number]
>(
  `${minedSelect('$4', '$5')} FROM txs t
  WHERE t.tx_id = ANY($1::text[]) AND ${visibleRow('t', '$2')} AND t.block_height <= $3::integer
  ORDER BY t.block_height DESC, t.microblock_sequence DESC, t.tx_index DESC`,
);

const minedTxsByKeys = statement<
  MinedTxRecord,
  [txIds: string[], indexBlockHashes: string[], microblockHashes: string[], from: number, to: number]
>(
  `${minedSelect('$4', '$5')}
  FROM unnest($1::text[], $2::text[], $3::text[]) AS k(tx_id, index_block_hash, microblock_hash)
  JOIN txs t ON t.tx_id = k.tx_id AND t.index_block_hash = k.index_block_hash
    AND t.microblock_hash = k.microblock_hash`,
);

/** The key and status of the visible rows of the tx ids `txIdCondition` (SQL text on `t.tx_id`) names. */
const minedTxByKey = statement<
  MinedTxRecord,
  [txId: string, indexBlockHash: string, microblockHash: string, from: number, to: number]
>(
  `${minedSelect('$4', '$5')} FROM txs t
  WHERE t.tx_id = $1 AND t.index_block_hash = $2 AND t.microblock_hash = $3`,
);

const minedTxVersionsWhere = (txIdCondition: string) =>
  `SELECT t.tx_id, t.index_block_hash, t.microblock_hash, t.status FROM txs t
  WHERE ${txIdCondition} AND ${visibleRow('t', '$2')}`;

const minedTxVersion = statement<MinedTxVersion & { tx_id: string }, [txId: string, unanchored: boolean]>(
  `${minedTxVersionsWhere('t.tx_id = $1')} LIMIT 1`,
);

const minedTxVersions = statement<MinedTxVersion & { tx_id: string }, [txIds: string[], unanchored: boolean]>(
  minedTxVersionsWhere('t.tx_id = ANY($1::text[])'),
);

/**
 * The columns of a mempool record (`MempoolTxRecord`) of a row `alias`, its status given by the SQL
 * expression `status`.
 */
export const mempoolRecordColumns = (alias: string, status: string) =>
  `${columnsOf(alias, DECODED_COLUMNS)}, ${status} AS status, ${alias}.replaced_by_tx_id, ${alias}.receipt_time,
  ${functionAbi(alias)}`;

/**
 * The status of a mempool row as a read sees it: a pruned row whose tx sits in an unconfirmed microblock
 * shows as pending to anchored reads (`$2`: unanchored), as it is not confirmed yet (docs/upstream.md A.2).
 */
const mempoolSelect = `SELECT ${mempoolRecordColumns(
  'm',
  `CASE WHEN m.pruned AND NOT $2::boolean AND EXISTS (
      SELECT 1 FROM txs u WHERE u.tx_id = m.tx_id AND ${unconfirmedRow('u')} AND ${canonicalRow('u')})
    THEN ${MempoolStatus.pending}::smallint ELSE m.status END`,
)}`;

const mempoolTxById = statement<MempoolTxRecord, [txId: string, unanchored: boolean]>(
  `${mempoolSelect} FROM mempool_txs m WHERE m.tx_id = $1`,
);

const mempoolTxsByIds = statement<MempoolTxRecord, [txIds: string[], unanchored: boolean]>(
  `${mempoolSelect} FROM mempool_txs m WHERE m.tx_id = ANY($1::text[])`,
);

/** The visible mined rows of these tx ids (at most one per id), with a page of their events. */
export async function findMinedTxs(
  sql: Sql,
  txIds: string[],
  visibility: Visibility,
  page: EventPage | null,
): Promise<MinedTxRecord[]> {
  if (txIds.length === 0) return [];
  return minedTxsByIds(
    sql,
    txIds,
    visibility.unanchored,
    visibility.maxHeight ?? MAX_INT,
    ...eventBounds(page),
  );
}

/**
 * The visible mined row of one tx id, with a page of its events: the hottest read of the API. A scalar key
 * and no sort let PostgreSQL settle on a generic plan instead of planning each call. At most one row of a tx
 * id is visible (a tx is mined once on the canonical chain; a microblock's staged rows give way to the
 * confirming block's).
 * @internal exported for its tests
 */
export async function findMinedTx(
  sql: Sql,
  txId: string,
  visibility: Visibility,
  page: EventPage,
): Promise<MinedTxRecord | undefined> {
  const [row] = await minedTxById(sql, txId, visibility.unanchored, ...eventBounds(page));
  return row;
}

/** `findMinedTx` as a function, for reads that may be answered together (`batchedMinedTxReads`). */
export type MinedTxReader = (
  txId: string,
  visibility: Visibility,
  page: EventPage,
) => Promise<MinedTxRecord | undefined>;

/**
 * `findMinedTx` for reads that arrive together (store/read/batched.ts): the ids asked for within one turn with
 * the same event page and `unanchored` are read by one statement, `findMinedTxs`'s (the same columns,
 * visibility rule and event page; no height cap), instead of one statement each; a read alone in its turn runs
 * `findMinedTx`'s own statement. The rows are the same (test/api/batched-tx-reads.test.ts compares both for
 * every tx of recorded chains). Measured on the 1M-tx chain, 32 reads in flight, per tx read (client CPU /
 * PostgreSQL backend CPU): one statement each 42–68 / 60–65 µs, in statements of 8 ids 29–31 / 42 µs
 * (bench finding F-read-batched-reads).
 */
export function batchedMinedTxReads(sqlOf: () => Sql): MinedTxReader {
  interface Ask {
    txId: string;
    visibility: Visibility;
    page: EventPage;
  }
  const read = batchedReads<Ask, MinedTxRecord | undefined>(
    ({ visibility, page }) => `${visibility.unanchored}:${eventBounds(page).join(':')}`,
    ({ txId, visibility, page }) => findMinedTx(sqlOf(), txId, visibility, page),
    async (asks) => {
      const { visibility, page } = asks[0];
      const ids = distinctKeys(asks, (a) => a.txId).map((a) => a.txId);
      const rows = await findMinedTxs(sqlOf(), ids, { unanchored: visibility.unanchored }, page);
      return answersByKey(
        asks,
        (a) => a.txId,
        rows,
        (row) => row.tx_id,
      );
    },
  );
  return (txId, visibility, page) => read({ txId, visibility, page });
}

/** The key and status of the visible mined row of a tx id (`findMinedTx`'s row), without reading it. */
export interface MinedTxVersion {
  index_block_hash: string;
  microblock_hash: string;
  status: number;
}

/**
 * The key and status of the row `findMinedTx` would read (same condition), or undefined.
 * @internal exported for its tests
 */
export async function findMinedTxVersion(
  sql: Sql,
  txId: string,
  visibility: Visibility,
): Promise<MinedTxVersion | undefined> {
  const [row] = await minedTxVersion(sql, txId, visibility.unanchored);
  return row && versionOf(row);
}

const versionOf = ({ index_block_hash, microblock_hash, status }: MinedTxVersion): MinedTxVersion => ({
  index_block_hash,
  microblock_hash,
  status,
});

/** `findMinedTxVersion` as a function, for reads that may be answered together (`batchedMinedTxVersionReads`). */
export type MinedTxVersionReader = (
  txId: string,
  visibility: Visibility,
) => Promise<MinedTxVersion | undefined>;

/**
 * `findMinedTxVersion` for reads that arrive together (store/read/batched.ts): the ids asked for within one
 * turn with the same `unanchored` are read by one statement, `findMinedTxVersions`'s (the same select list and
 * visibility rule, `minedTxVersionsWhere`), a read alone in its turn by `findMinedTxVersion`'s own. The answers
 * are the same (test/api/batched-tx-reads.test.ts compares both for every tx of recorded chains). Why: this
 * key read is what `GET /extended/v1/tx/:tx_id` runs for a tx whose rendering is kept (cache/rendered-txs.ts)
 * but whose whole answer is not (api/cache/answer-cache.ts): the small chain's cold case, one statement per request
 * (60 µs of API and 13 µs of PostgreSQL CPU per request; bench finding F-read-batched-reads).
 */
export function batchedMinedTxVersionReads(sqlOf: () => Sql): MinedTxVersionReader {
  interface Ask {
    txId: string;
    visibility: Visibility;
  }
  const read = batchedReads<Ask, MinedTxVersion | undefined>(
    ({ visibility }) => String(visibility.unanchored),
    ({ txId, visibility }) => findMinedTxVersion(sqlOf(), txId, visibility),
    async (asks) => {
      const ids = distinctKeys(asks, (a) => a.txId).map((a) => a.txId);
      const rows = await findMinedTxVersions(sqlOf(), ids, asks[0].visibility);
      // each read its own object: a caller may keep or change what it is given
      return answersByKey(
        asks,
        (a) => a.txId,
        rows,
        (row) => row.tx_id,
        versionOf,
      );
    },
  );
  return (txId, visibility) => read({ txId, visibility: { unanchored: visibility.unanchored } });
}

/** `findMinedTxVersion` for several tx ids (at most one row per id). */
export async function findMinedTxVersions(
  sql: Sql,
  txIds: string[],
  visibility: Visibility,
): Promise<(MinedTxVersion & { tx_id: string })[]> {
  if (txIds.length === 0) return [];
  return minedTxVersions(sql, txIds, visibility.unanchored);
}

/** The exact key of a mined row. */
export interface MinedTxRowKey {
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
}

/** Mined rows by their exact keys (as listed by the principal index), with a page of events. */
export async function findMinedTxsByKey(
  sql: Sql,
  keys: MinedTxRowKey[],
  page: EventPage | null,
): Promise<MinedTxRecord[]> {
  if (keys.length === 0) return [];
  return minedTxsByKeys(
    sql,
    keys.map((k) => k.tx_id),
    keys.map((k) => k.index_block_hash),
    keys.map((k) => k.microblock_hash),
    ...eventBounds(page),
  );
}

/** The mined row of one exact key (a primary-key read), with a page of events: `findMinedTxsByKey` of one key. */
export async function findMinedTxByKey(
  sql: Sql,
  key: MinedTxRowKey,
  page: EventPage | null,
): Promise<MinedTxRecord | undefined> {
  const [row] = await minedTxByKey(
    sql,
    key.tx_id,
    key.index_block_hash,
    key.microblock_hash,
    ...eventBounds(page),
  );
  return row;
}

/** `findMinedTxByKey` without events, as a function (`batchedMinedTxReadsByKey`). */
export type MinedTxByKeyReader = (key: MinedTxRowKey) => Promise<MinedTxRecord | undefined>;

/** A mined row's key as one string (to match rows read together to their asks). */
export const rowKeyId = (k: MinedTxRowKey) => `${k.tx_id}|${k.index_block_hash}|${k.microblock_hash}`;

/**
 * `findMinedTxByKey` (no events) for reads that arrive together (store/read/batched.ts): the keys asked within
 * one turn are read by one statement, `findMinedTxsByKey`'s (the same select list), a key alone by
 * `findMinedTxByKey`'s. Why: `/address/:principal/:tx_id/with_transfers` reads the mined row of a tx whose
 * rendering is not kept, one statement per request, after its first statement, itself batched
 * (`batchedAccountTxReads`): the requests of one batch then ask for their rows in the same turn. The rows are
 * the same (test/api/batched-account-tx-reads.test.ts compares both for every row key of recorded chains).
 */
export function batchedMinedTxReadsByKey(sqlOf: () => Sql): MinedTxByKeyReader {
  const read = batchedReads<MinedTxRowKey, MinedTxRecord | undefined>(
    () => '',
    (key) => findMinedTxByKey(sqlOf(), key, null),
    async (asked) => {
      const rows = await findMinedTxsByKey(sqlOf(), distinctKeys(asked, rowKeyId), null);
      // each read its own object: a caller may keep or change what it is given
      return answersByKey(asked, rowKeyId, rows, rowKeyId, (row) => ({ ...row }));
    },
  );
  return ({ tx_id, index_block_hash, microblock_hash }) => read({ tx_id, index_block_hash, microblock_hash });
}

export interface MempoolLookup {
  /** Reads that see unconfirmed microblocks (`unanchored=true`) find such txs mined, not in the mempool. */
  unanchored?: boolean;
}

/** Mempool rows of these ids, pending or pruned (pruned rows keep their last status; see `mempoolSelect`). */
export async function findMempoolTxs(
  sql: Sql,
  txIds: string[],
  lookup: MempoolLookup = {},
): Promise<MempoolTxRecord[]> {
  if (txIds.length === 0) return [];
  return mempoolTxsByIds(sql, txIds, lookup.unanchored ?? false);
}

/** The mempool row of one tx id (see `findMempoolTxs`). */
export async function findMempoolTx(
  sql: Sql,
  txId: string,
  lookup: MempoolLookup = {},
): Promise<MempoolTxRecord | undefined> {
  const [row] = await mempoolTxById(sql, txId, lookup.unanchored ?? false);
  return row;
}

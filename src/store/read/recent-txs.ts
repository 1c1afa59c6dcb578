import type { Sql } from '../db.js';
import { TX_TYPES } from '../schema/codes.js';
import { txTypeTotalsColumn } from '../schema/tables.js';
import { statement } from '../statement.js';
import { anchoredVisibleRow, canonicalRow, unconfirmedStreamRow } from '../visibility.js';
import { minedRecordOf, minedRowColumns, type MinedTxRecord } from './txs.js';

// Recent transactions (docs/upstream.md C.6): canonical txs newest first (height, microblock sequence, tx index),
// of some types or all. A page at any offset is found from the chain's totals (migration 033): the block holding
// the page's first tx is the lowest canonical block whose running count of such txs reaches its position, then
// the page is read from there down, one index range per type id (txs_type_chain_idx) merged in chain order.

/** The API's transaction types, in `TX_TYPES` order: a request's selection is a flag per type. */
const TYPE_NAMES = [...TX_TYPES.keys()];

/** The running count of the selected types' txs of chain totals `c` ($1: a flag per type, 1 or 0). */
const selectedCount = (alias: string) =>
  TYPE_NAMES.map((name, i) => `${alias}.${txTypeTotalsColumn(name)} * ($1::int[])[${i + 1}]`).join(' + ');

/** Whether the tx `t` is of a selected type ($1). */
const selectedType = (alias: string) =>
  `(${[...TX_TYPES.values()]
    .map((ids, i) => `(($1::int[])[${i + 1}] = 1 AND ${alias}.type_id IN (${ids.join(', ')}))`)
    .join(' OR ')})`;

interface Totals {
  /** the sum of the canonical blocks' tx_count */
  tx_count: string;
  /** the canonical anchored txs of the selected types */
  selected: string;
  /** the unconfirmed microblock txs of the selected types */
  unconfirmed: string;
  tip_height: number;
  root_height: number;
}

const totals = statement<Totals, [types: number[]]>(`
  SELECT c.tx_count, ${selectedCount('c')} AS selected, t.block_height AS tip_height,
    t.block_height - c.blocks + 1 AS root_height,
    (SELECT count(*) FROM txs u WHERE ${unconfirmedStreamRow('u')} AND ${selectedType('u')}) AS unconfirmed
  FROM chain_tip t JOIN chain_totals c ON c.index_block_hash = t.index_block_hash`);

interface Start {
  index_block_hash: string;
  block_height: number;
  /** the selected txs of the block above the page's first */
  skip: string;
}

/**
 * The block holding the k-th ($2) selected tx from the chain's start: the lowest canonical block whose
 * running count reaches k. For all types, a seek on chain_totals_tx_rows_idx; for some, a binary search over
 * the canonical heights between $3 and $4 (the counts rise with height), a seek of the canonical height index
 * per step (~log2 of the chain's blocks).
 */
const startOfAll = statement<Start, [types: number[], k: number]>(`
  SELECT c.index_block_hash, c.block_height, c.tx_rows - $2::bigint AS skip
  FROM chain_totals c JOIN blocks b ON b.index_block_hash = c.index_block_hash
  WHERE c.tx_rows >= $2::bigint AND b.canonical AND $1::int[] IS NOT NULL
  ORDER BY c.tx_rows, c.block_height LIMIT 1`);

const startOfSome = statement<Start, [types: number[], k: number, low: number, high: number]>(`
  WITH RECURSIVE search (low, high) AS (
    SELECT $3::integer, $4::integer
    UNION ALL
    SELECT CASE WHEN m.count >= $2::bigint THEN s.low ELSE x.middle + 1 END,
      CASE WHEN m.count >= $2::bigint THEN x.middle ELSE s.high END
    FROM search s
    CROSS JOIN LATERAL (SELECT (s.low + s.high) / 2 AS middle) AS x
    CROSS JOIN LATERAL (
      SELECT ${selectedCount('c')} AS count FROM blocks b JOIN chain_totals c ON c.index_block_hash = b.index_block_hash
      WHERE b.canonical AND b.block_height = x.middle
    ) AS m
    WHERE s.low < s.high
  )
  SELECT c.index_block_hash, c.block_height, ${selectedCount('c')} - $2::bigint AS skip
  FROM search s
  JOIN blocks b ON b.canonical AND b.block_height = s.low
  JOIN chain_totals c ON c.index_block_hash = b.index_block_hash
  WHERE s.low = s.high`);

type Row = Omit<MinedTxRecord, 'events'>;

/** Chain order, newest first; ties (genesis txs adopted into block 1) by id. */
const NEWEST_FIRST = (alias: string) =>
  `${alias}.block_height DESC, ${alias}.microblock_sequence DESC, ${alias}.tx_index DESC, ${alias}.tx_id DESC`;

/**
 * The page ($5 rows): the selected txs of the start block ($2) after the first $3 of them, then those of the
 * canonical blocks below its height ($4), one index range per type id merged in chain order.
 */
const anchoredPage = statement<
  Row,
  [types: number[], start: string, skip: number, height: number, limit: number]
>(`
  SELECT ${minedRowColumns('p')} FROM (
    (SELECT t.* FROM txs t
      WHERE t.index_block_hash = $2::text AND ${canonicalRow('t')} AND ${selectedType('t')}
      ORDER BY ${NEWEST_FIRST('t')} OFFSET $3::bigint LIMIT $5::bigint)
    UNION ALL
    (SELECT b.* FROM (${[...TX_TYPES.values()]
      .flatMap((ids, i) =>
        ids.map(
          (id) => `(SELECT t.* FROM txs t
        WHERE ($1::int[])[${i + 1}] = 1 AND t.type_id = ${id} AND t.block_height < $4::integer
          AND ${anchoredVisibleRow('t')}
        ORDER BY t.type_id DESC, t.block_height DESC, t.microblock_sequence DESC, t.tx_index DESC
        LIMIT $5::bigint)`,
        ),
      )
      .join('\n      UNION ALL ')}) AS b
    ORDER BY ${NEWEST_FIRST('b')} LIMIT $5::bigint)
  ) AS p
  LIMIT $5::bigint`);

/** The unconfirmed microblock txs of the selected types ($1), newest first: $2 rows after $3. */
const unconfirmedPage = statement<Row, [types: number[], limit: number, offset: number]>(`
  SELECT ${minedRowColumns('t')} FROM txs t
  WHERE ${unconfirmedStreamRow('t')} AND ${selectedType('t')}
  ORDER BY ${NEWEST_FIRST('t')} LIMIT $2 OFFSET $3`);

export interface RecentTxPage {
  /**
   * Without types: the sum of the canonical blocks' `tx_count` (plus the unconfirmed microblock txs when
   * `unanchored`), as the original counts; with types, the txs of those types listed. Kept on a page past the
   * end.
   */
  total: number;
  txs: MinedTxRecord[];
}

/**
 * A page of recent canonical txs, newest first, of the given types (null: all), the unconfirmed microblock
 * stream's first when `unanchored` (docs/upstream.md C.6).
 */
export async function listRecentTxs(
  sql: Sql,
  query: { types: readonly string[] | null; unanchored: boolean; limit: number; offset: number },
): Promise<RecentTxPage> {
  for (const type of query.types ?? []) {
    if (!TX_TYPES.has(type)) throw new Error(`unknown transaction type ${type}`);
  }
  const flags = TYPE_NAMES.map((name) => (query.types === null || query.types.includes(name) ? 1 : 0));
  const [tip] = await totals(sql, flags);
  if (!tip) return { total: 0, txs: [] };
  const unconfirmed = query.unanchored ? Number(tip.unconfirmed) : 0;
  const total = (query.types === null ? Number(tip.tx_count) : Number(tip.selected)) + unconfirmed;
  const { limit, offset } = query;
  const txs: Row[] = [];
  if (offset < unconfirmed && limit > 0) txs.push(...(await unconfirmedPage(sql, flags, limit, offset)));
  // the anchored txs: the k-th from the chain's start is the first of the page
  const k = Number(tip.selected) - Math.max(0, offset - unconfirmed);
  const rest = limit - txs.length;
  if (k >= 1 && rest > 0) {
    const [start] =
      query.types === null
        ? await startOfAll(sql, flags, k)
        : await startOfSome(sql, flags, k, tip.root_height, tip.tip_height);
    if (start) {
      txs.push(
        ...(await anchoredPage(
          sql,
          flags,
          start.index_block_hash,
          Number(start.skip),
          start.block_height,
          rest,
        )),
      );
    }
  }
  return { total, txs: txs.map((row) => minedRecordOf(row)) };
}

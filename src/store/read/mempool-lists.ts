import type { Sql } from '../db.js';
import { MempoolStatus } from '../schema/codes.js';
import { statement } from '../statement.js';
import { canonicalRow, unconfirmedRow } from '../visibility.js';
import { mempoolRecordColumns, type MempoolTxRecord } from './txs.js';

// The mempool list (docs/upstream.md C.7, and one principal's: C.8): pending txs, newest received first by
// default, or by fee or size, either way. An anchored read lists the unconfirmed microblock stream's txs too,
// as pending (they left the mempool when streamed, and are not confirmed yet). Each order is a range of a
// partial index of the pending rows (migration 036) merged with the few streamed ones; its offset is bounded
// by the mempool's size, which the node bounds, not by the chain's history.

/** Which pending txs: all, by sender and/or token-transfer recipient, or by a principal in any of its roles. */
export type MempoolFilter =
  | { kind: 'all' }
  | { kind: 'sender'; sender: string }
  | { kind: 'recipient'; recipient: string }
  | { kind: 'sender-and-recipient'; sender: string; recipient: string }
  /** sender, token-transfer recipient, deployed contract or called contract (sponsoring does not count) */
  | { kind: 'address'; address: string };

export type MempoolOrderBy = 'age' | 'size' | 'fee';
export type MempoolOrder = 'asc' | 'desc';

/** The rows of mempool txs `m` a filter keeps (its principals the first parameters), and its principals. */
const FILTERS: {
  [K in MempoolFilter['kind']]: [string, (f: Extract<MempoolFilter, { kind: K }>) => string[]];
} = {
  all: ['true', () => []],
  sender: ['m.sender_address = $1::text', (f) => [f.sender]],
  recipient: ['m.token_transfer_recipient = $1::text', (f) => [f.recipient]],
  'sender-and-recipient': [
    'm.sender_address = $1::text AND m.token_transfer_recipient = $2::text',
    (f) => [f.sender, f.recipient],
  ],
  address: [
    `(m.sender_address = $1::text OR m.token_transfer_recipient = $1::text
    OR m.smart_contract_contract_id = $1::text OR m.contract_call_contract_id = $1::text)`,
    (f) => [f.address],
  ],
};

/** The column each order sorts by; ties by id, in the same direction. */
const ORDER_COLUMNS: Record<MempoolOrderBy, string> = {
  age: 'receipt_time',
  size: 'tx_size',
  fee: 'fee_rate',
};

type ListRow = MempoolTxRecord & { total: string };
type ListParams = (string | boolean | number)[];

/**
 * The page: the pending rows of the filter, and (anchored reads: `unanchored` false) the mempool rows of the
 * unconfirmed stream's txs, each branch in the order (the planner merges them), shown as pending. `total`:
 * the pending txs (not the streamed ones) without filter; the rows listed with one. The parameters: the
 * filter's principals, then `unanchored`, the limit and the offset.
 */
function listText(filter: MempoolFilter['kind'], orderBy: MempoolOrderBy, order: MempoolOrder): string {
  const column = ORDER_COLUMNS[orderBy];
  const direction = order === 'asc' ? 'ASC' : 'DESC';
  const [where] = FILTERS[filter];
  // the filter's principals come first: its highest parameter number
  const n = Math.max(0, ...[...where.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  const [unanchored, limit, offset] = [`$${n + 1}::boolean`, `$${n + 2}`, `$${n + 3}`];
  const total =
    filter === 'all' ? '(SELECT count(*) FROM mempool_txs c WHERE NOT c.pruned)' : 'count(*) OVER ()';
  return `
    SELECT ${mempoolRecordColumns('m', `${MempoolStatus.pending}::smallint`)}, ${total} AS total
    FROM (
      SELECT m.* FROM mempool_txs m WHERE NOT m.pruned AND ${where}
      UNION ALL
      SELECT m.* FROM txs u JOIN mempool_txs m ON m.tx_id = u.tx_id
      WHERE NOT ${unanchored} AND ${unconfirmedRow('u')} AND ${canonicalRow('u')} AND m.pruned AND ${where}
    ) AS m
    ORDER BY m.${column} ${direction}, m.tx_id ${direction}
    LIMIT ${limit} OFFSET ${offset}`;
}

const lists = new Map<string, (sql: Sql, ...params: ListParams) => Promise<ListRow[]>>();

function listStatement(filter: MempoolFilter['kind'], orderBy: MempoolOrderBy, order: MempoolOrder) {
  const key = `${filter}|${orderBy}|${order}`;
  let list = lists.get(key);
  if (!list) lists.set(key, (list = statement<ListRow, ListParams>(listText(filter, orderBy, order))));
  return list;
}

export interface MempoolPage {
  /** the pending txs without filter (kept on a page past the end); the txs listed with one, 0 on an empty page */
  total: number;
  txs: MempoolTxRecord[];
}

/** A page of the mempool list (docs/upstream.md C.7, C.8): one statement. */
export async function listMempoolTxs(
  sql: Sql,
  query: {
    filter: MempoolFilter;
    orderBy: MempoolOrderBy;
    order: MempoolOrder;
    unanchored: boolean;
    limit: number;
    offset: number;
  },
): Promise<MempoolPage> {
  const { filter } = query;
  const principals = (FILTERS[filter.kind][1] as (f: MempoolFilter) => string[])(filter);
  const rows = await listStatement(filter.kind, query.orderBy, query.order)(
    sql,
    ...principals,
    query.unanchored,
    query.limit,
    query.offset,
  );
  let total = rows.length > 0 ? Number(rows[0].total) : 0;
  if (filter.kind === 'all' && rows.length === 0) total = await pendingCount(sql);
  const txs = rows.map(({ total: _total, ...tx }) => tx);
  return { total, txs };
}

const pending = statement<{ n: string }, []>('SELECT count(*) AS n FROM mempool_txs WHERE NOT pruned');

/** The pending txs (not pruned), counted by an index-only scan of a partial index of them. */
async function pendingCount(sql: Sql): Promise<number> {
  const [row] = await pending(sql);
  return Number(row.n);
}

import { InvalidRequestError } from '../../errors.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import {
  listMempoolTxs,
  type MempoolFilter,
  type MempoolOrder,
  type MempoolOrderBy,
} from '../../store/read/mempool-lists.js';
import { listRecentTxs } from '../../store/read/recent-txs.js';
import type { Store } from '../../store/store.js';
import { pageOf } from '../render/pages.js';
import { serializerOf } from '../render/serializer.js';
import { mempoolTransaction, minedTransaction } from '../render/txs.js';
import { PAGE_SIZES } from '../schemas/lists.js';
import { getMempoolTransactionListRoute, getTransactionListRoute } from '../schemas/tx-lists.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { chainTag } from './tags.js';

// GET /extended/v1/tx: recent transactions (docs/upstream.md C.6), and the mempool lists:
// /extended/v1/tx/mempool and /extended/v1/address/{principal}/mempool (C.7, C.8). Recent txs are tagged by the
// tip and its microblock (`unanchored` lists the stream's txs), the mempool lists by those and the mempool
// version (they show the stream's txs as pending): a client holding the tag gets its 304 before any read. Not
// cached: a page is a seek of an index whatever the offset (store/read/recent-txs.ts, mempool-lists.ts).

const writeTxList = serializerOf(getTransactionListRoute.schema.response[200]);
const writeMempoolList = serializerOf(getMempoolTransactionListRoute.schema.response[200]);

interface MempoolListQuery {
  limit: number;
  offset: number;
  unanchored: boolean;
  exclude_function_args: boolean;
}

interface MempoolFilterQuery extends MempoolListQuery {
  sender_address?: string;
  recipient_address?: string;
  address?: string;
  order_by: MempoolOrderBy;
  order: MempoolOrder;
}

/** The address filters of the mempool list → the filter (C.7): `address` alone, else sender and recipient. */
function mempoolFilter(query: MempoolFilterQuery): MempoolFilter {
  const { sender_address: sender, recipient_address: recipient, address } = query;
  if (address !== undefined) {
    if (sender !== undefined || recipient !== undefined) {
      throw new InvalidRequestError('The "address" filter cannot be specified with other address filters');
    }
    return { kind: 'address', address };
  }
  if (sender !== undefined && recipient !== undefined) {
    return { kind: 'sender-and-recipient', sender, recipient };
  }
  if (sender !== undefined) return { kind: 'sender', sender };
  if (recipient !== undefined) return { kind: 'recipient', recipient };
  return { kind: 'all' };
}

/** `limit=0` is the default, as the original reads it (C.0). */
const pageAsked = (query: { limit: number; offset: number }) => ({
  limit: query.limit || PAGE_SIZES.transaction.fallback,
  offset: query.offset,
});

interface TxListQuery {
  limit: number;
  offset: number;
  type?: string[];
  unanchored: boolean;
  exclude_function_args: boolean;
}

export function txListAnswers(store: Store) {
  async function recent(asked: Asked, query: TxListQuery): Promise<Answer> {
    const etag = chainTag(await cachedChainState(store), { withMempool: false }) ?? undefined;
    if (etag !== undefined && holds(asked, etag)) return notModified(etag);
    const page = pageAsked(query);
    const found = await listRecentTxs(store.sql, {
      types: query.type && query.type.length > 0 ? query.type : null,
      unanchored: query.unanchored,
      ...page,
    });
    const options = { excludeFunctionArgs: query.exclude_function_args };
    const body = pageOf(
      page,
      found.total,
      found.txs.map((tx) => minedTransaction(tx, options)),
    );
    return jsonAnswer(writeTxList(body), etag);
  }

  async function mempool(
    asked: Asked,
    filter: MempoolFilter,
    query: MempoolListQuery & { order_by: MempoolOrderBy; order: MempoolOrder },
  ): Promise<Answer> {
    const etag = chainTag(await cachedChainState(store), { withMempool: true }) ?? undefined;
    if (etag !== undefined && holds(asked, etag)) return notModified(etag);
    const page = pageAsked(query);
    const found = await listMempoolTxs(store.sql, {
      filter,
      orderBy: query.order_by,
      order: query.order,
      unanchored: query.unanchored,
      ...page,
    });
    const options = { excludeFunctionArgs: query.exclude_function_args };
    const body = pageOf(
      page,
      found.total,
      found.txs.map((tx) => mempoolTransaction(tx, options)),
    );
    return jsonAnswer(writeMempoolList(body), etag, true);
  }

  return {
    recent,
    /** The mempool, maybe filtered by principals (C.7). */
    mempool: (asked: Asked, query: MempoolFilterQuery) => mempool(asked, mempoolFilter(query), query),
    /** One principal's pending txs, newest received first (C.8). */
    principalMempool: (asked: Asked, principal: string, query: MempoolListQuery) =>
      mempool(asked, { kind: 'address', address: principal }, { ...query, order_by: 'age', order: 'desc' }),
  };
}

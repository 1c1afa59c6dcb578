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
import { AnswerCache } from '../cache/answer-cache.js';
import { pageOf } from '../render/pages.js';
import { serializerOf } from '../render/serializer.js';
import { mempoolTransaction, minedTransaction } from '../render/txs.js';
import { PAGE_SIZES } from '../schemas/lists.js';
import { getMempoolTransactionListRoute, getTransactionListRoute } from '../schemas/tx-lists.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { chainTag, tipState } from './tags.js';

// GET /extended/v1/tx: recent transactions (docs/upstream.md C.6), and the mempool lists:
// /extended/v1/tx/mempool and /extended/v1/address/{principal}/mempool (C.7, C.8). Recent txs are tagged by the
// tip and its microblock (`unanchored` lists the stream's txs), the mempool lists by those and the mempool
// version (they show the stream's txs as pending): a client holding the tag gets its 304 before any read.
//
// Caches (docs/caching.md): each route's whole answers, under the tip and its microblock; the mempool lists'
// also under the mempool version (every answer shows it). A page is a seek of an index whatever the offset
// (store/read/recent-txs.ts, mempool-lists.ts), but reading and rendering its 50 txs cost 2.5-7 ms of CPU (the
// API's and PostgreSQL's) a request on a loaded machine, its cached answer ~0.1 ms (bench finding
// F-read-beyond-pages-kept). Recent txs page over the whole history (any offset, any types): cached from the
// second ask of a URL, so a walk over the chain caches nothing. The mempool lists are cached when first made:
// the mempool changes often, and an answer waiting for its second ask would seldom be cached before the next
// change.

const FILE = 'src/api/answers/tx-lists.ts';
/** A page of 50 txs as the bench chains answer it (~80 KB), with its URL and tag. */
const TX_PAGE_TYPICAL_BYTES = 80 * 1024;

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
  const recentAnswers = new AnswerCache({
    name: 'answers: recent txs',
    file: FILE,
    state: tipState(store),
    cacheOnSecondAsk: true,
    typicalAnswerBytes: TX_PAGE_TYPICAL_BYTES,
  });
  const mempoolAnswers = new AnswerCache({
    name: 'answers: mempool txs',
    file: FILE,
    state: tipState(store),
    showsMempool: 'every answer',
  });
  const principalMempoolAnswers = new AnswerCache({
    name: 'answers: address mempool txs',
    file: FILE,
    state: tipState(store),
    showsMempool: 'every answer',
    maxBytes: 2 * 1024 * 1024,
  });

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
    caches: { recent: recentAnswers, mempool: mempoolAnswers, principalMempool: principalMempoolAnswers },
    recent: (asked: Asked, query: TxListQuery) => recentAnswers.made(() => recent(asked, query)),
    /** The mempool, maybe filtered by principals (C.7). */
    mempool: (asked: Asked, query: MempoolFilterQuery) =>
      mempoolAnswers.made(() => mempool(asked, mempoolFilter(query), query)),
    /** One principal's pending txs, newest received first (C.8). */
    principalMempool: (asked: Asked, principal: string, query: MempoolListQuery) =>
      principalMempoolAnswers.made(() =>
        mempool(asked, { kind: 'address', address: principal }, { ...query, order_by: 'age', order: 'desc' }),
      ),
  };
}

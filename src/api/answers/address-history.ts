import { NotFoundError } from '../../errors.js';
import { listAddressTransactions, listAddressTxEvents } from '../../store/read/address-history.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import type { Store } from '../../store/store.js';
import { AnswerCache } from '../cache/answer-cache.js';
import { addressTransactionEvent, addressTransactionsPage } from '../render/address-history.js';
import { pageOf } from '../render/pages.js';
import { serializerOf } from '../render/serializer.js';
import { getAddressTransactionEventsRoute, getAddressTransactionsRoute } from '../schemas/v2-addresses.js';
import { storedTxId } from './account.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { chainTag, tipState } from './tags.js';

// GET /extended/v2/addresses/{address}/transactions and its /{tx_id}/events (docs/upstream.md C.9, C.10). Both
// read canonical rows with an unconfirmed microblock stream's, so both are tagged by the tip and its
// microblock: a client holding the tag gets its 304 before any read.
//
// Caches (docs/caching.md): each route's whole answers, under the tip and its microblock (what decides which
// rows are visible; neither shows the mempool). A page is read by index ranges whatever the offset
// (store/read/address-history.ts), but reading and rendering a 50-tx page cost ~7 ms of CPU (the API's and
// PostgreSQL's) a request on a loaded machine, its cached answer ~0.13 ms (bench finding
// F-read-beyond-pages-kept). The pages are cached when first made, as the account listings are
// (answers/account.ts); a tx's events, one answer per tx of a principal, from their second ask, as a single tx
// with transfers is: a walk over a principal's history then caches nothing.

interface PageQuery {
  limit: number;
  offset: number;
}

const FILE = 'src/api/answers/address-history.ts';
/** A tx's events as the bench chains answer them (~1 KB), with the URL and tag. */
const EVENTS_TYPICAL_BYTES = 1200;

const writeTransactions = serializerOf(getAddressTransactionsRoute.schema.response[200]);
const writeEvents = serializerOf(getAddressTransactionEventsRoute.schema.response[200]);

export function addressHistoryAnswers(store: Store) {
  const transactionsAnswers = new AnswerCache({
    name: 'answers: v2 address transactions',
    file: FILE,
    state: tipState(store),
  });
  const eventsAnswers = new AnswerCache({
    name: 'answers: v2 address tx events',
    file: FILE,
    state: tipState(store),
    maxBytes: 2 * 1024 * 1024,
    cacheOnSecondAsk: true,
    typicalAnswerBytes: EVENTS_TYPICAL_BYTES,
  });

  async function tag() {
    return chainTag(await cachedChainState(store), { withMempool: false }) ?? undefined;
  }

  /** A page of the principal's transactions, newest first, with its part in each. */
  async function transactions(
    asked: Asked,
    principal: string,
    query: PageQuery & { exclude_function_args: boolean },
  ): Promise<Answer> {
    const etag = await tag();
    if (etag !== undefined && holds(asked, etag)) return notModified(etag);
    const page = await listAddressTransactions(store.sql, principal, query);
    const body = addressTransactionsPage(page, query, principal, {
      excludeFunctionArgs: query.exclude_function_args,
    });
    return jsonAnswer(writeTransactions(body), etag);
  }

  /** The STX, FT and NFT events of one tx that the principal sent or received. */
  async function events(asked: Asked, principal: string, txId: string, query: PageQuery): Promise<Answer> {
    const etag = await tag();
    if (etag !== undefined && holds(asked, etag)) return notModified(etag);
    const page = await listAddressTxEvents(store.sql, principal, storedTxId(txId), query);
    if (!page.found) throw new NotFoundError('Transaction not found');
    const body = pageOf(query, page.total, page.events.map(addressTransactionEvent));
    return jsonAnswer(writeEvents(body), etag);
  }

  return {
    caches: { transactions: transactionsAnswers, events: eventsAnswers },
    transactions: (asked: Asked, principal: string, query: PageQuery & { exclude_function_args: boolean }) =>
      transactionsAnswers.made(() => transactions(asked, principal, query)),
    events: (asked: Asked, principal: string, txId: string, query: PageQuery) =>
      eventsAnswers.made(() => events(asked, principal, txId, query)),
  };
}

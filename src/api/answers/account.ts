import { InvalidRequestError, NotFoundError } from '../../errors.js';
import { resolveScope, type ScopeRequest } from '../../store/read/account-scope.js';
import {
  batchedAccountTxReads,
  listAccountTxs,
  listAccountTxsAtHeight,
  readAccountTx,
  readAccountTxParts,
  type AccountTxKey,
} from '../../store/read/account-txs.js';
import { getAccountBalances } from '../../store/read/balances.js';
import { batchedMinedTxReadsByKey } from '../../store/read/txs.js';
import type { Store } from '../../store/store.js';
import { AnswerCache } from '../cache/answer-cache.js';
import { minedTxRenderings } from '../cache/rendered-txs.js';
import {
  balancesJson,
  renderedTx,
  txWithTransfersText,
  txsWithTransfersPageJson,
  type RenderedTx,
} from '../render/addresses.js';
import { serializerOf } from '../render/serializer.js';
import { AddressBalances } from '../schemas/addresses.js';
import { MAX_INT } from '../schemas/params.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { chainTagAtTip, tipState } from './tags.js';

// GET /extended/v1/address/{principal}/balances, /transactions_with_transfers and /{tx_id}/with_transfers
// (docs/upstream.md A.0, A.1, A.8, A.9). A contract id works wherever an address does. Every answer is tagged by
// the chain tip and its microblock stream (balances, which show pending mempool totals, also by the mempool
// version), so a client holding the tag gets its 304 before any read.
//
// Caches (docs/caching.md): each route's whole answers (below): a busy principal's 94 KB page is sent again as
// it was built, not rebuilt per request. The listings' txs are rendered once across requests and tips (the
// account-listing renderings, cache/rendered-txs.ts). The chain state comes from its cache
// (store/read/chain-state.ts).
//
// Reads: the first statement of a single tx with transfers, and its reads of mined rows whose renderings were
// expected cached and were not, are batched: those of requests arriving together are one statement each
// (store/read/batched.ts).

const FILE = 'src/api/answers/account.ts';

export const TX_LIMIT_DEFAULT = 20;
export const TX_LIMIT_MAX = 50;
/** A tx with transfers as the bench chains answer it (~2.4 KB), with its URL and tag. */
const TX_WITH_TRANSFERS_TYPICAL_BYTES = 2600;

export interface AtBlock {
  unanchored: boolean;
  until_block?: string;
}

interface ListingQuery extends AtBlock {
  limit: number;
  offset: number;
  height?: number;
}

/**
 * `unanchored` / `until_block` → what to read (A.0). `until_block` is strict (a deliberate difference, its
 * schema's check): a whole number >= 0, or 0x + 64 hex digits naming a block by block hash or index block
 * hash; "" is absent.
 */
function scopeRequest(query: AtBlock): ScopeRequest {
  const until = query.until_block;
  if (until === undefined || until === '') return { unanchored: query.unanchored };
  if (query.unanchored) {
    throw new InvalidRequestError(
      "can't handle both 'unanchored=true' and 'until_block' in the same request",
    );
  }
  return until.startsWith('0x')
    ? { untilHash: until.toLowerCase() }
    : { untilHeight: Math.min(Number(until), MAX_INT) };
}

/** A tx id as its schema lets it through (`0x` optional, any case) → the stored form, 0x and lowercase. */
export function storedTxId(value: string): string {
  return `0x${value.replace(/^0x/, '').toLowerCase()}`;
}

const writeBalances = serializerOf(AddressBalances);

/** The balances at the tip or as of a block; the pending mempool totals only at the tip (A.1). */
export async function balancesAsOf(store: Store, principal: string, query: AtBlock, tip: number) {
  const at = scopeRequest(query);
  const scope = await resolveScope(store.sql, at, tip);
  const found = await getAccountBalances(store.sql, principal, scope, {
    withPending: !('untilHeight' in at || 'untilHash' in at),
  });
  return balancesJson(found, scope.height);
}

// eslint-disable-next-line max-lines-per-function -- a factory: the caches of the resource and the answer functions sharing them, each under 80 lines
export function accountAnswers(store: Store) {
  const state = tipState(store);
  const balancesAnswers = new AnswerCache({
    name: 'answers: balances',
    file: FILE,
    state,
    showsMempool: 'every answer',
  });
  const listingAnswers = new AnswerCache({
    name: 'answers: transactions_with_transfers',
    file: FILE,
    state,
  });
  // A single tx with transfers is the principal's visible row of the tx, that row's rendering and the
  // principal's transfers in it: all of them change only with the tip or its microblock stream (only mined txs
  // are answered). Its answers are small and many (one per tx of the principal, ~2.5 KB with its URL, ~3.7 KB
  // counted with what holds it), so they are cached on their second ask: the 8 MB bound holds ~2,200, a walk
  // over more distinct txs than are remembered (~6,500: the bench's cold walk on the 1M chain) caches nothing
  // and evicts nothing, and the busiest principal of the small bench chain (2,056 txs) is answered from memory
  // from its second pass on.
  const txAnswers = new AnswerCache({
    name: 'answers: tx with transfers',
    file: FILE,
    state,
    cacheOnSecondAsk: true,
    typicalAnswerBytes: TX_WITH_TRANSFERS_TYPICAL_BYTES,
  });
  const renderings = minedTxRenderings(store);
  const readers = {
    rows: batchedAccountTxReads(() => store.sql),
    minedTx: batchedMinedTxReadsByKey(() => store.sql),
  };

  const tagged = (withMempool: boolean) => chainTagAtTip(store, withMempool);

  /**
   * STX (with lock state and pending mempool totals), fungible and non-fungible token balances, at the tip or as
   * of a block.
   */
  async function balances(asked: Asked, principal: string, query: AtBlock): Promise<Answer> {
    const { tag, tip } = await tagged(true);
    if (tag !== null && holds(asked, tag)) return notModified(tag);
    const found = await balancesAsOf(store, principal, query, tip);
    return jsonAnswer(writeBalances(found), tag ?? undefined, true);
  }

  /** A page of the principal's txs, newest first, each with the transfers it takes part in. */
  async function txsWithTransfers(asked: Asked, principal: string, query: ListingQuery): Promise<Answer> {
    const { tag, tip } = await tagged(false);
    if (tag !== null && holds(asked, tag)) return notModified(tag);
    const { offset, height, until_block: until } = query;
    const limit = query.limit || TX_LIMIT_DEFAULT;
    if (height && until) {
      throw new InvalidRequestError("can't handle until_block and block_height in the same request");
    }
    const at = scopeRequest(query);
    const page = height
      ? await listAccountTxsAtHeight(store.sql, principal, Math.min(height, MAX_INT))
      : await listAccountTxs(store.sql, principal, await resolveScope(store.sql, at, tip), { limit, offset });
    // txs rendered by earlier requests are not read again
    const rendered = new Map<AccountTxKey, RenderedTx>();
    const parts = await readAccountTxParts(store.sql, principal, page.keys, (key) => {
      const json = renderings.get(key);
      if (json) rendered.set(key, json);
      return json !== undefined;
    });
    const json = txsWithTransfersPageJson({ limit, offset, total: page.total }, parts, principal, (part) => {
      // a cached rendering when the row was not read, else rendered from its row and cached for next pages
      if (!part.tx) {
        const cached = rendered.get(part.key);
        if (!cached) throw new Error(`tx ${part.key.tx_id} neither read nor rendered before`);
        return cached;
      }
      const fresh = renderedTx(part.tx);
      renderings.set(part.tx, fresh);
      return fresh;
    });
    return jsonAnswer(json, tag ?? undefined);
  }

  /** One tx of the principal with the transfers it takes part in. */
  async function txWithTransfers(asked: Asked, principal: string, givenTxId: string): Promise<Answer> {
    const { tag } = await tagged(false);
    if (tag !== null && holds(asked, tag)) return notModified(tag);
    const txId = storedTxId(givenTxId);
    let cached: RenderedTx | undefined;
    const part = await readAccountTx(
      store.sql,
      principal,
      txId,
      (key) => {
        cached = renderings.get(key);
        return cached !== undefined;
      },
      // no rendering of the tx cached: its row comes with the first statement (one round trip, not two)
      { ...readers, rowWithKey: !renderings.holdsTx(txId) },
    );
    if (!part) throw new NotFoundError('No matching transaction found');
    let rendering = cached;
    if (part.tx) {
      rendering = renderedTx(part.tx);
      renderings.set(part.tx, rendering);
    }
    return jsonAnswer(txWithTransfersText(rendering!, part.transfers, principal), tag ?? undefined);
  }

  return {
    caches: { balances: balancesAnswers, listing: listingAnswers, tx: txAnswers },
    balances: (asked: Asked, principal: string, query: AtBlock) =>
      balancesAnswers.made(() => balances(asked, principal, query)),
    txsWithTransfers: (asked: Asked, principal: string, query: ListingQuery) =>
      listingAnswers.made(() => txsWithTransfers(asked, principal, query)),
    txWithTransfers: (asked: Asked, principal: string, txId: string) =>
      txAnswers.made(() => txWithTransfers(asked, principal, txId)),
  };
}

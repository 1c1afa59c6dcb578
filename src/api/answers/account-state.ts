import { InvalidRequestError, NotFoundError } from '../../errors.js';
import { resolveScope } from '../../store/read/account-scope.js';
import { getAccountBalances } from '../../store/read/balances.js';
import { listFtBalances } from '../../store/read/ft-balances.js';
import { getNonces, getNoncesAt } from '../../store/read/nonces.js';
import type { Store } from '../../store/store.js';
import { AnswerCache } from '../cache/answer-cache.js';
import { balancesJson } from '../render/addresses.js';
import { pageOf } from '../render/pages.js';
import { serializerOf } from '../render/serializer.js';
import {
  getAccountStxBalanceRoute,
  getPrincipalFtBalancesRoute,
  getPrincipalStxBalanceRoute,
} from '../schemas/balances.js';
import { PAGE_SIZES } from '../schemas/lists.js';
import { getAccountNoncesRoute } from '../schemas/nonces.js';
import { MAX_INT } from '../schemas/params.js';
import { balancesAsOf, type AtBlock } from './account.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { chainTagAtTip, tipState } from './tags.js';

// An account's state per asset kind, and its nonces: GET /extended/v1/address/{principal}/stx,
// /extended/v2/addresses/{principal}/balances/stx and /ft, and /extended/v1/address/{principal}/nonces
// (docs/upstream.md C.11 to C.14). Tagged as the account routes are (answers/account.ts): by the tip and its
// microblock stream, and by the mempool version where the answer shows it; a client holding the tag gets its
// 304 before any read.
//
// Caches (docs/caching.md): each route's whole answers, under the tip and its microblock, and the mempool
// version for those that show it (the nonces and the v1 STX balance always, the v2 STX balance with
// `include_mempool`), cached when first made, as the balances are (answers/account.ts). Each is one
// principal's few rows, but a wallet polls them: a cached answer costs no read and no render (bench finding
// F-read-beyond-pages-kept).

const writeStxBalance = serializerOf(getAccountStxBalanceRoute.schema.response[200]);
const writeV2StxBalance = serializerOf(getPrincipalStxBalanceRoute.schema.response[200]);
const writeFtBalances = serializerOf(getPrincipalFtBalancesRoute.schema.response[200]);
const writeNonces = serializerOf(getAccountNoncesRoute.schema.response[200]);

const FILE = 'src/api/answers/account-state.ts';
/**
 * The bound of each route's answers: ~1.5 KB counted each (a ~200-byte body, its URL and tag, and what holds
 * them: cache/entry-bytes.ts), so ~2,700 principals polled. With 1 MiB, the bench's walk over 1,000 typical
 * principals evicted every answer before it was asked again (F-read-beyond-pages-kept).
 */
const ACCOUNT_STATE_BOUND = 4 * 1024 * 1024;

// eslint-disable-next-line max-lines-per-function -- a factory: the caches of the family and the answer functions sharing them, each under 80 lines
export function accountStateAnswers(store: Store) {
  const cache = (name: string, showsMempool?: 'every answer' | 'some answers') =>
    new AnswerCache({
      name,
      file: FILE,
      state: tipState(store),
      showsMempool,
      maxBytes: ACCOUNT_STATE_BOUND,
    });
  const caches = {
    nonces: cache('answers: nonces', 'every answer'),
    stxBalance: cache('answers: v1 stx balance', 'every answer'),
    v2StxBalance: cache('answers: v2 stx balance', 'some answers'),
    ftBalances: cache('answers: v2 ft balances'),
  };
  const tagged = (withMempool: boolean) => chainTagAtTip(store, withMempool);

  /** The `stx` member of the balances, with the vesting schedule when there is one (C.12). */
  async function stxBalance(asked: Asked, principal: string, query: AtBlock): Promise<Answer> {
    const { tag, tip } = await tagged(true);
    if (tag !== null && holds(asked, tag)) return notModified(tag);
    const { stx, token_offering_locked: vesting } = await balancesAsOf(store, principal, query, tip);
    const body = vesting ? { ...stx, token_offering_locked: vesting } : stx;
    return jsonAnswer(writeStxBalance(body), tag ?? undefined, true);
  }

  /** The v2 STX balance at the tip: the lock state, and the pending totals with `include_mempool` (C.13). */
  async function v2StxBalance(asked: Asked, principal: string, includeMempool: boolean): Promise<Answer> {
    const { tag, tip } = await tagged(includeMempool);
    if (tag !== null && holds(asked, tag)) return notModified(tag);
    const scope = await resolveScope(store.sql, { unanchored: false }, tip);
    const found = await getAccountBalances(store.sql, principal, scope, { withPending: includeMempool });
    const { stx } = balancesJson(found, scope.height);
    const body = {
      balance: stx.balance,
      total_miner_rewards_received: stx.total_miner_rewards_received,
      lock_tx_id: stx.lock_tx_id,
      locked: stx.locked,
      lock_height: stx.lock_height,
      burnchain_lock_height: stx.burnchain_lock_height,
      burnchain_unlock_height: stx.burnchain_unlock_height,
      estimated_balance: stx.estimated_balance,
      pending_balance_inbound: stx.pending_balance_inbound,
      pending_balance_outbound: stx.pending_balance_outbound,
    };
    return jsonAnswer(writeV2StxBalance(body), tag ?? undefined, includeMempool);
  }

  /** A page of the fungible tokens the principal holds, by lowercased asset identifier (C.14). */
  async function ftBalances(
    asked: Asked,
    principal: string,
    query: { limit: number; offset: number },
  ): Promise<Answer> {
    const { tag } = await tagged(false);
    if (tag !== null && holds(asked, tag)) return notModified(tag);
    // `limit=0` is the default, as the original reads it (docs/upstream.md C.0)
    const page = {
      limit: query.limit || PAGE_SIZES.ftBalance.fallback,
      offset: query.offset,
    };
    const found = await listFtBalances(store.sql, principal, page);
    const body = pageOf(
      page,
      found.total,
      found.balances.map((b) => ({ token: b.asset_identifier, balance: b.balance })),
    );
    return jsonAnswer(writeFtBalances(body), tag ?? undefined);
  }

  /** The last executed and pending nonces, the next one, and the gaps between (C.11). */
  async function nonces(
    asked: Asked,
    principal: string,
    query: { block_height?: number; block_hash?: string },
  ): Promise<Answer> {
    const { tag } = await tagged(true);
    if (tag !== null && holds(asked, tag)) return notModified(tag);
    const { block_height: height, block_hash: hash } = query;
    if (height !== undefined && hash !== undefined) {
      throw new InvalidRequestError('Multiple block query parameters specified');
    }
    if (height !== undefined || hash !== undefined) {
      const at = height !== undefined ? { height: Math.min(height, MAX_INT) } : { hash: hash!.toLowerCase() };
      const found = await getNoncesAt(store.sql, principal, at);
      if (!found.found) throw new NotFoundError(`No block found for ${JSON.stringify(at)}`);
      const body = {
        last_mempool_tx_nonce: null,
        last_executed_tx_nonce: found.lastExecuted,
        possible_next_nonce: found.possibleNext,
        detected_missing_nonces: [],
        detected_mempool_nonces: [],
      };
      return jsonAnswer(writeNonces(body), tag ?? undefined, true);
    }
    const n = await getNonces(store.sql, principal);
    const body = {
      last_mempool_tx_nonce: n.lastMempool,
      last_executed_tx_nonce: n.lastExecuted,
      possible_next_nonce: n.possibleNext,
      detected_missing_nonces: n.detectedMissing,
      detected_mempool_nonces: n.detectedMempool,
    };
    return jsonAnswer(writeNonces(body), tag ?? undefined, true);
  }

  return {
    caches,
    stxBalance: (asked: Asked, principal: string, query: AtBlock) =>
      caches.stxBalance.made(() => stxBalance(asked, principal, query)),
    v2StxBalance: (asked: Asked, principal: string, includeMempool: boolean) =>
      caches.v2StxBalance.made(() => v2StxBalance(asked, principal, includeMempool)),
    ftBalances: (asked: Asked, principal: string, query: { limit: number; offset: number }) =>
      caches.ftBalances.made(() => ftBalances(asked, principal, query)),
    nonces: (asked: Asked, principal: string, query: { block_height?: number; block_hash?: string }) =>
      caches.nonces.made(() => nonces(asked, principal, query)),
  };
}

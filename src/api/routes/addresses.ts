import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { InvalidRequestError, NotFoundError } from '../../errors.js';
import { resolveScope, type ScopeRequest } from '../../store/read/account-scope.js';
import {
  listAccountTxs,
  listAccountTxsAtHeight,
  batchedAccountTxReads,
  readAccountTx,
  readAccountTxParts,
  type AccountTxKey,
} from '../../store/read/account-txs.js';
import { getAccountBalances } from '../../store/read/balances.js';
import { batchedMinedTxReadsByKey } from '../../store/read/txs.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import { chainTag } from '../cache/etag.js';
import { keptByEtag } from '../cache/kept-answers.js';
import {
  AddressBalances,
  TransactionWithTransfers,
  TransactionsWithTransfersPage,
} from '../schemas/addresses.js';
import { errorResponses } from '../schemas/common.js';
import {
  AccountTxIdParam,
  AccountTxsHeightQuery,
  LimitQuery,
  MAX_INT,
  OffsetQuery,
  PrincipalParam,
  UnanchoredQuery,
  UntilBlockQuery,
} from '../schemas/params.js';
import {
  balancesJson,
  renderedTx,
  txWithTransfersText,
  txsWithTransfersPageJson,
  type RenderedTx,
  type SerializeWith,
} from '../render/addresses.js';
import { minedTxJsonCache } from '../cache/rendered-txs.js';
import type { RouteOptions } from './route-options.js';
import { jsonAnswer, serializeWith } from './json-reply.js';

// GET /extended/v1/address/{principal}/balances, /transactions_with_transfers and /{tx_id}/with_transfers
// (docs/upstream.md A.0, A.1, A.8, A.9). A contract id works wherever an address does.

const TX_LIMIT_DEFAULT = 20;
const TX_LIMIT_MAX = 50;
/** A tx with transfers as the bench chains answer it (~2.4 KB), with its URL and tag. */
const TX_WITH_TRANSFERS_TYPICAL_BYTES = 2600;

/**
 * `unanchored` / `until_block` → what to read (A.0). `until_block` is strict (a deliberate difference, its
 * schema's check): a whole number >= 0, or 0x + 64 hex digits naming a block by block hash or index block
 * hash; "" is absent.
 */
function scopeRequest(query: { unanchored: boolean; until_block?: string }): ScopeRequest {
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
function storedTxId(value: string): string {
  return `0x${value.replace(/^0x/, '').toLowerCase()}`;
}

export const addressRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  // Balances and listings are kept by their ETag (cache/kept-answers.ts): a busy principal's 94 KB page is
  // then sent as it was built, not rebuilt per request.
  const keptBalances = keptByEtag(chainTag(store, { withMempool: true }));
  const keptListings = keptByEtag(chainTag(store, { withMempool: false }));
  // So is a single tx with transfers. Its answer is the principal's visible row of the tx (canonical, on the
  // canonical microblock stream, unconfirmed microblocks included), that row's rendering and the principal's
  // transfers in it: all of them change only with the tip or its microblock stream, what the tag names (the
  // mempool plays no part: only mined txs are answered). Its answers are small and many (one per tx of the
  // principal, ~2.5 KB with its URL, ~3.7 KB counted with what holds it), so they are kept on their second
  // ask: the 8 MB bound holds ~2,200, a walk over more distinct txs than are remembered (~6,500: the bench's
  // cold walk on the 1M chain) keeps
  // nothing and evicts nothing, and the busiest principal of the small bench chain (2,056 txs) is answered
  // from memory from its second pass on.
  const keptTxWithTransfers = keptByEtag(chainTag(store, { withMempool: false }), {
    keepOnSecondAsk: true,
    typicalAnswerBytes: TX_WITH_TRANSFERS_TYPICAL_BYTES,
  });
  // a single tx with transfers: the first statements of requests that arrive together are one statement, and
  // so are their reads of the mined rows whose renderings were expected kept and were not (the row of a tx
  // with no kept rendering is read by the first statement)
  const accountTxReaders = {
    rows: batchedAccountTxReads(() => store.sql),
    minedTx: batchedMinedTxReadsByKey(() => store.sql),
  };
  app.get(
    '/extended/v1/address/:principal/balances',
    {
      schema: {
        operationId: 'get_account_balance',
        summary: 'Get account balances',
        description:
          'STX (with lock state and pending mempool totals), fungible and non-fungible token balances of an address or contract, at the tip or as of a block.',
        tags: ['Accounts'],
        params: Type.Object({ principal: PrincipalParam }),
        querystring: Type.Object({
          unanchored: UnanchoredQuery,
          until_block: Type.Optional(UntilBlockQuery),
        }),
        response: { 200: AddressBalances, ...errorResponses },
      },
      ...keptBalances,
    },
    async (request) => {
      const { principal } = request.params;
      const at = scopeRequest(request.query);
      const scope = await resolveScope(store.sql, at, (await cachedChainState(store)).block_height);
      const balances = await getAccountBalances(store.sql, principal, scope, {
        withPending: !('untilHeight' in at || 'untilHash' in at),
      });
      return balancesJson(balances, scope.height);
    },
  );

  app.get(
    '/extended/v1/address/:principal/transactions_with_transfers',
    {
      schema: {
        operationId: 'get_account_transactions_with_transfers',
        summary: 'Get account transactions with transfers',
        description:
          'Transactions of an address or contract, newest first, each with the STX, FT and NFT transfers it takes part in.',
        tags: ['Accounts'],
        params: Type.Object({ principal: PrincipalParam }),
        querystring: Type.Object({
          limit: LimitQuery(TX_LIMIT_MAX, TX_LIMIT_DEFAULT, 'Transactions per page'),
          offset: OffsetQuery(Number.MAX_SAFE_INTEGER, 'Index of the first transaction'),
          height: Type.Optional(AccountTxsHeightQuery),
          unanchored: UnanchoredQuery,
          until_block: Type.Optional(UntilBlockQuery),
        }),
        response: { 200: TransactionsWithTransfersPage, ...errorResponses },
      },
      ...keptListings,
    },
    async (request, reply) => {
      const { principal } = request.params;
      const { offset, height, until_block: until } = request.query;
      const limit = request.query.limit || TX_LIMIT_DEFAULT;
      if (height && until) {
        throw new InvalidRequestError("can't handle until_block and block_height in the same request");
      }
      const at = scopeRequest(request.query);
      const page = height
        ? await listAccountTxsAtHeight(store.sql, principal, Math.min(height, MAX_INT))
        : await listAccountTxs(
            store.sql,
            principal,
            await resolveScope(store.sql, at, (await cachedChainState(store)).block_height),
            {
              limit,
              offset,
            },
          );
      // txs rendered by earlier requests are not read again (see cache/rendered-txs.ts)
      const cache = minedTxJsonCache(store);
      const kept = new Map<AccountTxKey, RenderedTx>();
      const parts = await readAccountTxParts(store.sql, principal, page.keys, (key) => {
        const json = cache.get(key);
        if (json) kept.set(key, json);
        return json !== undefined;
      });
      const serialize: SerializeWith = (schema, value) => serializeWith(reply as FastifyReply, schema, value);
      const json = txsWithTransfersPageJson(
        { limit, offset, total: page.total },
        parts,
        principal,
        (part) => {
          // a kept rendering when the row was not read, else rendered from its row and kept for next pages
          if (!part.tx) {
            const rendered = kept.get(part.key);
            if (!rendered) throw new Error(`tx ${part.key.tx_id} neither read nor kept`);
            return rendered;
          }
          const rendered = renderedTx(part.tx, serialize);
          cache.set(part.tx, rendered);
          return rendered;
        },
        serialize,
      );
      // already serialized (as the response schema's serializer would have)
      return jsonAnswer<TransactionsWithTransfersPage>(reply as FastifyReply, json);
    },
  );

  app.get(
    '/extended/v1/address/:principal/:tx_id/with_transfers',
    {
      config: { deprecated: true },
      schema: {
        operationId: 'get_single_transaction_with_transfers',
        summary: 'Get account transaction with transfers',
        description:
          'One transaction of an address or contract with the STX, FT and NFT transfers it takes part in. Deprecated in favour of the address transaction events.',
        tags: ['Accounts'],
        deprecated: true,
        params: Type.Object({ principal: PrincipalParam, tx_id: AccountTxIdParam }),
        response: { 200: TransactionWithTransfers, ...errorResponses },
      },
      ...keptTxWithTransfers,
    },
    async (request, reply) => {
      const { principal } = request.params;
      const txId = storedTxId(request.params.tx_id);
      // the tx's kept rendering when an earlier request rendered it (see cache/rendered-txs.ts)
      const cache = minedTxJsonCache(store);
      let kept: RenderedTx | undefined;
      const part = await readAccountTx(
        store.sql,
        principal,
        txId,
        (key) => {
          kept = cache.get(key);
          return kept !== undefined;
        },
        // no rendering of the tx kept: its row comes with the first statement (one round trip, not two)
        { ...accountTxReaders, rowWithKey: !cache.holdsTx(txId) },
      );
      if (!part) throw new NotFoundError('No matching transaction found');
      const serialize: SerializeWith = (schema, value) => serializeWith(reply, schema, value);
      let rendered = kept;
      if (part.tx) {
        rendered = renderedTx(part.tx, serialize);
        cache.set(part.tx, rendered);
      }
      const json = txWithTransfersText(rendered!, part.transfers, principal, serialize);
      // already serialized (as the response schema's serializer would have)
      return jsonAnswer<TransactionWithTransfers>(reply as FastifyReply, json);
    },
  );
};

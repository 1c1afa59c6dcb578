import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { isValidContractName, isValidPrincipal, isValidStacksAddress } from '../../chain/address.js';
import { InvalidRequestError, NotFoundError } from '../../errors.js';
import { resolveScope, type ScopeRequest } from '../../store/read/account-scope.js';
import {
  findAccountTx,
  listAccountTxs,
  listAccountTxsAtHeight,
  readAccountTxParts,
  readAccountTxs,
  type AccountTxKey,
} from '../../store/read/account-txs.js';
import { getAccountBalances } from '../../store/read/balances.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import type { Store } from '../../store/store.js';
import { etag } from '../plugins/etag.js';
import {
  AddressBalances,
  PrincipalParam,
  TransactionWithTransfers,
  TransactionsWithTransfersPage,
  UnanchoredQuery,
  UntilBlockQuery,
} from '../schemas/addresses.js';
import { MAX_INT, errorResponses } from '../schemas/common.js';
import { balancesJson, txWithTransfersJson, txsWithTransfersPageJson } from '../serializers/addresses.js';
import { minedTxJsonCache, type MinedTxJson } from '../serializers/mined-tx-cache.js';
import type { RouteOptions } from './index.js';

// GET /extended/v1/address/{principal}/balances, /transactions_with_transfers and /{tx_id}/with_transfers
// (NOTES-upstream A.0, A.1, A.8, A.9). A contract id works wherever an address does.

const TX_LIMIT_DEFAULT = 20;
const TX_LIMIT_MAX = 50;

/** Why a principal that passed the route pattern is still not one (c32check, contract name), or null. */
function principalProblem(principal: string): string | null {
  if (isValidPrincipal(principal)) return null;
  const dot = principal.indexOf('.');
  if (dot < 0) return 'not a c32check-encoded Stacks address (bad characters, length or checksum)';
  const address = principal.slice(0, dot);
  if (!isValidStacksAddress(address)) {
    return `"${address}" is not a c32check-encoded Stacks address (bad characters, length or checksum)`;
  }
  const name = principal.slice(dot + 1);
  if (!isValidContractName(name)) {
    return `contract name "${name}" must start with a letter, hold only letters, digits, "-" and "_", and have 1 to 128 characters`;
  }
  return 'not a principal';
}

/** Principals found valid (c32check costs two SHA-256 per check): a pure function's answers, bounded. */
const validPrincipals = new Set<string>();
const VALID_PRINCIPALS_MAX = 10_000;

async function checkPrincipal(request: FastifyRequest) {
  const { principal } = request.params as { principal: string };
  if (validPrincipals.has(principal)) return;
  const problem = principalProblem(principal);
  if (problem) throw new InvalidRequestError(`invalid STX address "${principal}": ${problem}`);
  if (validPrincipals.size >= VALID_PRINCIPALS_MAX) validPrincipals.clear();
  validPrincipals.add(principal);
}

/**
 * `unanchored` / `until_block` → what to read (A.0). `until_block` is strict (a deliberate difference): a
 * whole number >= 0, or 0x + 64 hex digits naming a block by block hash or index block hash; "" is absent.
 */
function scopeRequest(query: { unanchored: boolean; until_block?: string }): ScopeRequest {
  const until = query.until_block;
  if (until === undefined || until === '') return { unanchored: query.unanchored };
  if (query.unanchored) {
    throw new InvalidRequestError(
      "can't handle both 'unanchored=true' and 'until_block' in the same request",
    );
  }
  if (/^\d+$/.test(until)) return { untilHeight: Math.min(Number(until), MAX_INT) };
  if (/^0x[0-9a-f]{64}$/i.test(until)) return { untilHash: until.toLowerCase() };
  throw new InvalidRequestError(
    `until_block must be a block height (a whole number >= 0) or a block hash or index block hash (0x and 64 hex digits), got "${until}"`,
  );
}

/** A 32-byte tx id, `0x` optional (any case): the lowercase 0x form, else a 400 (a deliberate difference). */
function parseTxId(value: string): string {
  const match = /^(?:0x)?([0-9a-f]{64})$/i.exec(value);
  if (!match) {
    throw new InvalidRequestError(
      `tx_id must be a transaction id (64 hex digits, 0x optional), got "${value}"`,
    );
  }
  return `0x${match[1].toLowerCase()}`;
}

/** Answers change with the chain tip and the unconfirmed microblock stream; balances with the mempool too. */
function chainEtag(store: Store, options: { withMempool: boolean }) {
  return etag(async () => {
    const state = await cachedChainState(store);
    if (!state.index_block_hash) return null;
    const mempool = options.withMempool ? `:${state.mempool_version}` : '';
    return `${state.index_block_hash}:${state.microblock_hash || '0x'}${mempool}`;
  });
}

export const addressRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
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
      preHandler: [checkPrincipal, chainEtag(store, { withMempool: true })],
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
          limit: Type.Integer({
            minimum: 0,
            maximum: TX_LIMIT_MAX,
            default: TX_LIMIT_DEFAULT,
            description: 'page size (0 means the default, 20)',
          }),
          offset: Type.Integer({
            minimum: 0,
            maximum: Number.MAX_SAFE_INTEGER,
            default: 0,
            description: 'index of the first transaction',
          }),
          height: Type.Optional(
            Type.Integer({
              minimum: 0,
              description: 'only transactions of this block height, all of them (no paging); 0 means none',
            }),
          ),
          unanchored: UnanchoredQuery,
          until_block: Type.Optional(UntilBlockQuery),
        }),
        response: { 200: TransactionsWithTransfersPage, ...errorResponses },
      },
      preHandler: [checkPrincipal, chainEtag(store, { withMempool: false })],
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
      // txs rendered by earlier requests are not read again (see mined-tx-cache.ts)
      const cache = minedTxJsonCache(store);
      const kept = new Map<AccountTxKey, MinedTxJson>();
      const parts = await readAccountTxParts(store.sql, principal, page.keys, (key) => {
        const json = cache.get(key);
        if (json) kept.set(key, json);
        return json !== undefined;
      });
      const json = txsWithTransfersPageJson(
        { limit, offset, total: page.total },
        parts,
        principal,
        kept,
        cache,
        (schema, value) =>
          reply.serializeInput(
            value as Record<string, unknown>,
            schema as unknown as Record<string, unknown>,
          ),
      );
      // already serialized (as the response schema's serializer would have)
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(json);
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
        params: Type.Object({ principal: PrincipalParam, tx_id: Type.String() }),
        response: { 200: TransactionWithTransfers, ...errorResponses },
      },
      preHandler: [checkPrincipal, chainEtag(store, { withMempool: false })],
    },
    async (request) => {
      const { principal } = request.params;
      const txId = parseTxId(request.params.tx_id);
      const key = await findAccountTx(store.sql, principal, txId);
      const [record] = key ? await readAccountTxs(store.sql, principal, [key]) : [];
      if (!record) throw new NotFoundError('No matching transaction found');
      return txWithTransfersJson(record, principal);
    },
  );
};

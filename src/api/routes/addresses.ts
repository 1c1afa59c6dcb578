import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { accountAnswers, TX_LIMIT_DEFAULT, TX_LIMIT_MAX } from '../answers/account.js';
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
  OffsetQuery,
  PrincipalParam,
  UnanchoredQuery,
  UntilBlockQuery,
} from '../schemas/params.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

// GET /extended/v1/address/{principal}/balances, /transactions_with_transfers and /{tx_id}/with_transfers
// (docs/upstream.md A.0, A.1, A.8, A.9): the answers are answers/account.ts's.

export const addressRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const accounts = accountAnswers(store);
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
      onRequest: answerFromCache(accounts.caches.balances),
    },
    async (request, reply) =>
      send(request, reply, await accounts.balances(request, request.params.principal, request.query)),
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
      onRequest: answerFromCache(accounts.caches.listing),
    },
    async (request, reply) =>
      send(request, reply, await accounts.txsWithTransfers(request, request.params.principal, request.query)),
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
      onRequest: answerFromCache(accounts.caches.tx),
    },
    async (request, reply) => {
      const { principal, tx_id: txId } = request.params;
      return send(request, reply, await accounts.txWithTransfers(request, principal, txId));
    },
  );
};

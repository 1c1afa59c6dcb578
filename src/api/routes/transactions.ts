import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { txAnswers } from '../answers/tx.js';
import { errorResponses } from '../schemas/common.js';
import { MAX_MULTIPLE_TX_IDS, TxIdParam, TxIdsQuery, TxQuery, splitTxIds } from '../schemas/params.js';
import { MempoolTransaction, Transaction, TransactionList } from '../schemas/transactions.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

export const transactionRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const txs = txAnswers(store);
  app.get(
    '/extended/v1/tx/multiple',
    {
      schema: {
        operationId: 'get_tx_list_details',
        summary: 'Get details for multiple transactions',
        description:
          'Mined or mempool transactions by id. Ids come as repeated `tx_id` keys or comma-separated, ' +
          `at most ${MAX_MULTIPLE_TX_IDS}; each answer says whether that id was found. 404 when none is.`,
        tags: ['Transactions'],
        querystring: Type.Object({ tx_id: TxIdsQuery, ...TxQuery }),
        response: { 200: TransactionList, ...errorResponses },
      },
      preValidation: splitTxIds,
      onRequest: answerFromCache(txs.caches.list),
    },
    async (request, reply) => send(request, reply, await txs.txList(request.query.tx_id, request.query)),
  );

  app.get(
    '/extended/v1/tx/:tx_id',
    {
      schema: {
        operationId: 'get_transaction_by_id',
        summary: 'Get transaction',
        description:
          'A mined transaction with a page of its events, else the mempool transaction (pending or dropped). ' +
          'An id without `0x` is redirected to the prefixed path.',
        tags: ['Transactions'],
        params: Type.Object({ tx_id: TxIdParam }),
        querystring: Type.Object(TxQuery),
        response: { 200: Type.Union([Transaction, MempoolTransaction]), ...errorResponses },
      },
      onRequest: answerFromCache(txs.caches.byId),
    },
    async (request, reply) =>
      send(request, reply, await txs.txById(request, request.params.tx_id, request.query)),
  );
};

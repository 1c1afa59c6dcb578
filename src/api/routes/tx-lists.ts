import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { txListAnswers } from '../answers/tx-lists.js';
import {
  getAddressMempoolTransactionsRoute,
  getMempoolTransactionListRoute,
  getTransactionListRoute,
} from '../schemas/tx-lists.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

// The transaction lists (docs/upstream.md C.6 to C.8): answers/tx-lists.ts's.

export const txListRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const lists = txListAnswers(store);
  app.get(
    getTransactionListRoute.url,
    {
      schema: getTransactionListRoute.schema,
      preValidation: getTransactionListRoute.preValidation,
      onRequest: answerFromCache(lists.caches.recent),
    },
    async (request, reply) => send(request, reply, await lists.recent(request, request.query)),
  );
  app.get(
    getMempoolTransactionListRoute.url,
    { schema: getMempoolTransactionListRoute.schema, onRequest: answerFromCache(lists.caches.mempool) },
    async (request, reply) => send(request, reply, await lists.mempool(request, request.query)),
  );
  app.get(
    getAddressMempoolTransactionsRoute.url,
    {
      schema: getAddressMempoolTransactionsRoute.schema,
      onRequest: answerFromCache(lists.caches.principalMempool),
    },
    async (request, reply) =>
      send(request, reply, await lists.principalMempool(request, request.params.principal, request.query)),
  );
};

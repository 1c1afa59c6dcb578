import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { addressHistoryAnswers } from '../answers/address-history.js';
import { getAddressTransactionEventsRoute, getAddressTransactionsRoute } from '../schemas/v2-addresses.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

// GET /extended/v2/addresses/{address}/transactions and /{tx_id}/events: answers/address-history.ts's.

export const addressHistoryRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const history = addressHistoryAnswers(store);
  app.get(
    getAddressTransactionsRoute.url,
    { schema: getAddressTransactionsRoute.schema, onRequest: answerFromCache(history.caches.transactions) },
    async (request, reply) =>
      send(request, reply, await history.transactions(request, request.params.address, request.query)),
  );
  app.get(
    getAddressTransactionEventsRoute.url,
    { schema: getAddressTransactionEventsRoute.schema, onRequest: answerFromCache(history.caches.events) },
    async (request, reply) => {
      const { address, tx_id: txId } = request.params;
      return send(request, reply, await history.events(request, address, txId, request.query));
    },
  );
};

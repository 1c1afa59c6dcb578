import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { mempoolAnswers } from '../answers/mempool.js';
import { errorResponses } from '../schemas/common.js';
import { MempoolFees, MempoolStats } from '../schemas/mempool.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

export const mempoolRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const mempool = mempoolAnswers(store);
  app.get(
    '/extended/v1/tx/mempool/stats',
    {
      schema: {
        operationId: 'get_mempool_transaction_stats',
        summary: 'Get mempool transaction statistics',
        description:
          'For the pending transactions of each type (token_transfer, smart_contract incl. versioned contracts, contract_call, poison_microblock): the count, and p25/p50/p75/p95 of the fee, the age in blocks and the size in bytes. Percentiles interpolate linearly.',
        tags: ['Mempool'],
        response: { 200: MempoolStats, ...errorResponses },
      },
      onRequest: answerFromCache(mempool.caches.stats),
    },
    async (request, reply) => send(request, reply, await mempool.stats(request)),
  );

  app.get(
    '/extended/v2/mempool/fees',
    {
      schema: {
        operationId: 'get_mempool_fee_priorities',
        summary: 'Get mempool fee priorities',
        description:
          'Fee estimates in µSTX from the pending transactions: no/low/medium/high priority are the rounded p25/p50/p75/p95 of their fees, over all of them and per type (a type without pending transactions is left out).',
        tags: ['Mempool'],
        response: { 200: MempoolFees, ...errorResponses },
      },
      onRequest: answerFromCache(mempool.caches.fees),
    },
    async (request, reply) => send(request, reply, await mempool.fees(request)),
  );
};

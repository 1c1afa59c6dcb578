import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { blockListAnswers } from '../answers/block-lists.js';
import { getBlocksRoute, getBlockTransactionsRoute } from '../schemas/v2-blocks.js';
import {
  getBlocksByBurnBlockRoute,
  getBurnBlockRoute,
  getBurnBlocksRoute,
} from '../schemas/v2-burn-blocks.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

// The block and burn block lists (docs/upstream.md C.1-C.5): answers/block-lists.ts's.

export const blockListRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const lists = blockListAnswers(store);
  app.get(
    getBlocksRoute.url,
    { schema: getBlocksRoute.schema, onRequest: answerFromCache(lists.caches.blocks) },
    async (request, reply) => send(request, reply, await lists.blocks(request, request.query)),
  );
  app.get(
    getBlockTransactionsRoute.url,
    {
      schema: getBlockTransactionsRoute.schema,
      preValidation: getBlockTransactionsRoute.preValidation,
      onRequest: answerFromCache(lists.caches.blockTransactions),
    },
    async (request, reply) =>
      send(
        request,
        reply,
        await lists.blockTransactions(request, request.params.height_or_hash, request.query),
      ),
  );
  app.get(
    getBurnBlocksRoute.url,
    { schema: getBurnBlocksRoute.schema, onRequest: answerFromCache(lists.caches.burnBlocks) },
    async (request, reply) => send(request, reply, await lists.burnBlocks(request, request.query)),
  );
  app.get(
    getBurnBlockRoute.url,
    {
      schema: getBurnBlockRoute.schema,
      preValidation: getBurnBlockRoute.preValidation,
      onRequest: answerFromCache(lists.caches.burnBlock),
    },
    async (request, reply) =>
      send(request, reply, await lists.burnBlock(request, request.params.height_or_hash)),
  );
  app.get(
    getBlocksByBurnBlockRoute.url,
    {
      schema: getBlocksByBurnBlockRoute.schema,
      preValidation: getBlocksByBurnBlockRoute.preValidation,
      onRequest: answerFromCache(lists.caches.burnBlockBlocks),
    },
    async (request, reply) =>
      send(
        request,
        reply,
        await lists.burnBlockBlocks(request, request.params.height_or_hash, request.query),
      ),
  );
};

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { tokenAnswers } from '../answers/tokens.js';
import { getNftHoldingsRoute } from '../schemas/nft-holdings.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

// GET /extended/v1/tokens/nft/holdings: answers/tokens.ts's.

export const tokenRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const tokens = tokenAnswers(store);
  app.get(
    getNftHoldingsRoute.url,
    {
      schema: getNftHoldingsRoute.schema,
      preValidation: getNftHoldingsRoute.preValidation,
      onRequest: answerFromCache(tokens.cache),
    },
    async (request, reply) => send(request, reply, await tokens.nftHoldings(request, request.query)),
  );
};

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { contractInfoAnswers } from '../answers/contract-info.js';
import { searchAnswers } from '../answers/search.js';
import { getContractByIdRoute } from '../schemas/contract-info.js';
import { searchByIdRoute } from '../schemas/search.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

// GET /extended/v1/contract/{contract_id} and /extended/v1/search/{id}: answers/contract-info.ts's and
// answers/search.ts's (search's answers are not cached: answers/search.ts says why).

export const contractInfoRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const answers = contractInfoAnswers(store);
  const searches = searchAnswers(store);
  app.get(
    getContractByIdRoute.url,
    { schema: getContractByIdRoute.schema, onRequest: answerFromCache(answers.cache) },
    async (request, reply) =>
      send(request, reply, await answers.contract(request, request.params.contract_id)),
  );
  app.get(searchByIdRoute.url, { schema: searchByIdRoute.schema }, async (request, reply) =>
    send(request, reply, await searches.search(request.params.id, request.query)),
  );
};

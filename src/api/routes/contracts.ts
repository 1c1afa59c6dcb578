import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { contractAnswers } from '../answers/contract.js';
import { errorResponses } from '../schemas/common.js';
import { ContractStatusQuery, ContractStatusResponse } from '../schemas/contracts.js';
import { MAX_CONTRACT_IDS } from '../schemas/params.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

export const contractRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const contracts = contractAnswers(store);
  app.get(
    '/extended/v2/smart-contracts/status',
    {
      schema: {
        operationId: 'get_smart_contracts_status',
        summary: 'Get contracts status',
        description: `The deployment status of up to ${MAX_CONTRACT_IDS} contracts: the latest canonical deployment (its transaction status, which may be a failure, and block height), else the pending deployment with the lowest nonce (\`status: pending\`), else \`found: false\`.`,
        tags: ['Smart Contracts'],
        querystring: ContractStatusQuery,
        response: { 200: ContractStatusResponse, ...errorResponses },
      },
      onRequest: answerFromCache(contracts.caches.statuses),
    },
    async (request, reply) =>
      send(request, reply, await contracts.statuses(request, request.query.contract_id)),
  );
};

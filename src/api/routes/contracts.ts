import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { findContractDeployments } from '../../store/read/contracts.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import { tipTag } from '../cache/etag.js';
import { keptByEtag } from '../cache/kept-answers.js';
import { errorResponses } from '../schemas/common.js';
import { contractStatuses } from '../render/contracts.js';
import { ContractStatusQuery, ContractStatusResponse } from '../schemas/contracts.js';
import { MAX_CONTRACT_IDS } from '../schemas/params.js';
import type { RouteOptions } from './route-options.js';

/** The distinct requested ids, in request order (their schema checked them). */
function requestedIds(query: ContractStatusQuery): string[] {
  return [...new Set(typeof query.contract_id === 'string' ? [query.contract_id] : query.contract_id)];
}

export const contractRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  // Statuses are kept by their ETag (cache/kept-answers.ts). The ETag is the tip, as upstream's (a mempool
  // deploy keeps it), but a pending deployment shows in the answer: kept answers are dropped at each mempool
  // change too. Each answer is < 1 KB per id: the default 8 MB bound keeps thousands of id sets.
  const kept = keptByEtag(tipTag(store), {
    generationOf: async (tag) => `${tag}:${(await cachedChainState(store)).mempool_version}`,
  });
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
      ...kept,
    },
    async (request) => {
      const ids = requestedIds(request.query);
      return contractStatuses(ids, await findContractDeployments(store.sql, ids));
    },
  );
};

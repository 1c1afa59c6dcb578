import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { cachedChainState } from '../../store/read/chain-state.js';
import { findContractDeployments } from '../../store/read/contracts.js';
import { etag } from '../plugins/etag.js';
import { errorResponses } from '../schemas/common.js';
import {
  ContractStatusQuery,
  ContractStatusResponse,
  type ContractStatusEntry,
} from '../schemas/contracts.js';
import { MAX_CONTRACT_IDS } from '../schemas/params.js';
import type { RouteOptions } from './index.js';

/** The distinct requested ids, in request order (their schema checked them). */
function requestedIds(query: ContractStatusQuery): string[] {
  return [...new Set(typeof query.contract_id === 'string' ? [query.contract_id] : query.contract_id)];
}

export const contractRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
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
      preHandler: etag(async () => {
        const state = await cachedChainState(store);
        return state.block_height > 0 ? state.microblock_hash || state.index_block_hash : null;
      }),
    },
    async (request) => {
      const ids = requestedIds(request.query);
      const deployments = await findContractDeployments(store.sql, ids);
      const body: Record<string, ContractStatusEntry> = {};
      for (const id of ids) {
        const d = deployments.get(id);
        if (!d) {
          body[id] = { found: false };
          continue;
        }
        body[id] = {
          found: true,
          result: {
            status: d.status,
            tx_id: d.tx_id,
            contract_id: d.contract_id,
            ...(d.block_height !== null ? { block_height: d.block_height } : {}),
          },
        };
      }
      return body;
    },
  );
};

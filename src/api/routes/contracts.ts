import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { isValidContractId } from '../../chain/address.js';
import { InvalidRequestError } from '../../errors.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import { findContractDeployments } from '../../store/read/contracts.js';
import { etag } from '../plugins/etag.js';
import { errorResponses } from '../schemas/common.js';
import {
  ContractStatusQuery,
  ContractStatusResponse,
  MAX_CONTRACT_IDS,
  type ContractStatusEntry,
} from '../schemas/contracts.js';
import type { RouteOptions } from './index.js';

/** Contract ids found valid (c32check costs two SHA-256 per check): a pure function's answers, bounded. */
const validContractIds = new Set<string>();
const VALID_CONTRACT_IDS_MAX = 10_000;

function validContractId(id: string): boolean {
  if (validContractIds.has(id)) return true;
  if (!isValidContractId(id)) return false;
  if (validContractIds.size >= VALID_CONTRACT_IDS_MAX) validContractIds.clear();
  validContractIds.add(id);
  return true;
}

/** The distinct requested ids in request order; 400 when one is malformed or there are too many. */
function requestedIds(query: ContractStatusQuery): string[] {
  const ids = [...new Set(typeof query.contract_id === 'string' ? [query.contract_id] : query.contract_id)];
  if (ids.length > MAX_CONTRACT_IDS) {
    throw new InvalidRequestError(
      `querystring/contract_id: at most ${MAX_CONTRACT_IDS} distinct contract ids per request, got ${ids.length}`,
    );
  }
  const invalid = ids.find((id) => !validContractId(id));
  if (invalid !== undefined) {
    throw new InvalidRequestError(
      `querystring/contract_id: "${invalid}" is not a contract id (expected <stacks address>.<contract name>, e.g. SP000000000000000000002Q6VF78.pox)`,
    );
  }
  return ids;
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
      preHandler: [
        // invalid requests fail before the ETag could answer 304
        async (request: FastifyRequest) => {
          requestedIds(request.query as ContractStatusQuery);
        },
        etag(async () => {
          const state = await cachedChainState(store);
          return state.block_height > 0 ? state.microblock_hash || state.index_block_hash : null;
        }),
      ],
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

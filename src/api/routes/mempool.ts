import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { cachedChainState } from '../../store/read/chain-state.js';
import {
  MempoolAggregatesCache,
  MempoolTypeGroup,
  mempoolStateKey,
  roundHalfEven,
  type MempoolAggregates,
  type Percentiles,
} from '../../store/read/mempool.js';
import { etag } from '../plugins/etag.js';
import { errorResponses } from '../schemas/common.js';
import { MempoolFees, MempoolStats, type FeePriorities } from '../schemas/mempool.js';
import type { RouteOptions } from './index.js';

const STATS_TYPES = ['token_transfer', 'smart_contract', 'contract_call', 'poison_microblock'] as const;
const FEE_TYPES = ['token_transfer', 'contract_call', 'smart_contract'] as const;

function mempoolStats(aggregates: MempoolAggregates): MempoolStats {
  const pick = <T>(value: (type: (typeof STATS_TYPES)[number]) => T) => ({
    token_transfer: value('token_transfer'),
    smart_contract: value('smart_contract'),
    contract_call: value('contract_call'),
    poison_microblock: value('poison_microblock'),
  });
  const group = (type: (typeof STATS_TYPES)[number]) => aggregates.groups.get(MempoolTypeGroup[type]);
  const none: Percentiles = { p25: null, p50: null, p75: null, p95: null };
  return {
    tx_type_counts: pick((type) => group(type)?.tx_count ?? 0),
    tx_simple_fee_averages: pick((type) => group(type)?.fee_rate ?? none),
    tx_ages: pick((type) => group(type)?.age ?? none),
    tx_byte_sizes: pick((type) => group(type)?.tx_size ?? none),
  };
}

/** Upstream rounds the percentiles in SQL; an empty set (nulls) is serialized as 0. */
function feePriorities(p: Percentiles): FeePriorities {
  const round = (value: number | null) => (value === null ? 0 : roundHalfEven(value));
  return {
    no_priority: round(p.p25),
    low_priority: round(p.p50),
    medium_priority: round(p.p75),
    high_priority: round(p.p95),
  };
}

function mempoolFees(aggregates: MempoolAggregates): MempoolFees {
  const fees: MempoolFees = { all: feePriorities(aggregates.all_fee_rate) };
  for (const type of FEE_TYPES) {
    const group = aggregates.groups.get(MempoolTypeGroup[type]);
    if (group && group.tx_count > 0) fees[type] = feePriorities(group.fee_rate);
  }
  return fees;
}

export const mempoolRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  // One cache for both routes: they read the same aggregates, computed once per mempool state.
  const cache = new MempoolAggregatesCache();
  // The snapshot the ETag names is the one the handler serves (it may be the previous one, see the cache).
  const served = new WeakMap<FastifyRequest, MempoolAggregates>();

  async function snapshot(): Promise<MempoolAggregates> {
    const state = await cachedChainState(store);
    return cache.get(store.sql, mempoolStateKey(state), performance.now());
  }

  const mempoolEtag = etag(async (request) => {
    const aggregates = await snapshot();
    served.set(request, aggregates);
    return aggregates.mempool_updated_at;
  });

  const aggregates = async (request: FastifyRequest) => served.get(request) ?? snapshot();

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
      preHandler: mempoolEtag,
    },
    async (request) => mempoolStats(await aggregates(request)),
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
      preHandler: mempoolEtag,
    },
    async (request) => mempoolFees(await aggregates(request)),
  );
};

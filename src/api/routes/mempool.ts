import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { cachedChainState } from '../../store/read/chain-state.js';
import { MempoolAggregatesCache, mempoolStateKey, type MempoolAggregates } from '../../store/read/mempool.js';
import { keptByEtag } from '../cache/kept-answers.js';
import { errorResponses } from '../schemas/common.js';
import { mempoolFees, mempoolStats } from '../render/mempool.js';
import { MempoolFees, MempoolStats } from '../schemas/mempool.js';
import type { RouteOptions } from './route-options.js';

export const mempoolRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  // One cache for both routes: they read the same aggregates, computed once per mempool state.
  const cache = new MempoolAggregatesCache();
  // The snapshot the ETag names is the one the handler serves (it may be the previous one, see the cache).
  const served = new WeakMap<FastifyRequest, MempoolAggregates>();

  async function snapshot(): Promise<MempoolAggregates> {
    const state = await cachedChainState(store);
    return cache.get(store.sql, mempoolStateKey(state), performance.now());
  }

  const mempoolTag = async (request: FastifyRequest) => {
    const aggregates = await snapshot();
    served.set(request, aggregates);
    return aggregates.mempool_updated_at;
  };
  // Kept answers (cache/kept-answers.ts): the rendered body is sent again while the snapshot stays, instead of
  // rendering and serializing it per request (most of these routes' cost once the aggregates are in memory).
  // Kept per snapshot, not per tag: the tag (upstream's) is the mempool's update time, while ages move with the tip.
  // An answer is 1-2 KB: the bound only limits the URLs that differ by query parameters the routes ignore.
  const keepPerSnapshot = {
    maxBytes: 256 * 1024,
    generationOf: (tag: string, request: FastifyRequest) => served.get(request)?.key ?? tag,
  };
  const keptStats = keptByEtag(mempoolTag, keepPerSnapshot);
  const keptFees = keptByEtag(mempoolTag, keepPerSnapshot);

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
      ...keptStats,
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
      ...keptFees,
    },
    async (request) => mempoolFees(await aggregates(request)),
  );
};

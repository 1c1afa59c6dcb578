import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { NotFoundError } from '../../errors.js';
import {
  findBlockByBurnHeight,
  findCanonicalBlock,
  type BlockLocator,
  type BlockRecord,
  type BlockWithTxs,
} from '../../store/read/blocks.js';
import { cachedChainState, chainTipSeen } from '../../store/read/chain-state.js';
import { etag } from '../plugins/etag.js';
import { BlockV1, BlockV2 } from '../schemas/blocks.js';
import { errorResponses, isoTime } from '../schemas/common.js';
import { BurnBlockHeightParam, HeightOrHashParam, MAX_INT, checkHeightOrHash } from '../schemas/params.js';
import type { RouteOptions } from './index.js';

/** Upstream: a tenure height is stored for Nakamoto blocks; older blocks count as their own tenure. */
function tenureHeight(block: BlockRecord): number {
  if (block.tenure_height !== null) return block.tenure_height;
  return block.signer_bitvec !== null ? -1 : block.block_height;
}

function blockV2(block: BlockRecord): BlockV2 {
  return {
    canonical: block.canonical,
    height: block.block_height,
    hash: block.block_hash,
    block_time: block.block_time,
    block_time_iso: isoTime(block.block_time),
    tenure_height: tenureHeight(block),
    index_block_hash: block.index_block_hash,
    parent_block_hash: block.parent_block_hash,
    parent_index_block_hash: block.parent_index_block_hash,
    burn_block_time: block.burn_block_time,
    burn_block_time_iso: isoTime(block.burn_block_time),
    burn_block_hash: block.burn_block_hash,
    burn_block_height: block.burn_block_height,
    miner_txid: block.miner_txid,
    tx_count: block.tx_count,
    execution_cost_read_count: block.execution_cost_read_count,
    execution_cost_read_length: block.execution_cost_read_length,
    execution_cost_runtime: block.execution_cost_runtime,
    execution_cost_write_count: block.execution_cost_write_count,
    execution_cost_write_length: block.execution_cost_write_length,
  };
}

const ZERO_HASH = '0x' + '0'.repeat(64);

/** The v1 block (contract 2.8). Built as one literal: object rest/spread made it ~500x slower in V8. */
function blockV1(block: BlockWithTxs): BlockV1 {
  const parentMicroblockIsNone = block.parent_microblock_hash === ZERO_HASH;
  const blockTime = block.block_time > 0 ? block.block_time : block.burn_block_time;
  return {
    canonical: block.canonical,
    height: block.block_height,
    hash: block.block_hash,
    block_time: blockTime,
    block_time_iso: isoTime(blockTime),
    tenure_height: tenureHeight(block),
    index_block_hash: block.index_block_hash,
    parent_block_hash: block.parent_block_hash,
    burn_block_time: block.burn_block_time,
    burn_block_time_iso: isoTime(block.burn_block_time),
    burn_block_hash: block.burn_block_hash,
    burn_block_height: block.burn_block_height,
    miner_txid: block.miner_txid,
    execution_cost_read_count: block.execution_cost_read_count,
    execution_cost_read_length: block.execution_cost_read_length,
    execution_cost_runtime: block.execution_cost_runtime,
    execution_cost_write_count: block.execution_cost_write_count,
    execution_cost_write_length: block.execution_cost_write_length,
    txs: block.txs,
    parent_microblock_hash: parentMicroblockIsNone ? '' : block.parent_microblock_hash || '0x',
    parent_microblock_sequence: parentMicroblockIsNone ? -1 : block.parent_microblock_sequence,
    microblocks_accepted: block.microblocks_accepted,
    microblocks_streamed: block.microblocks_streamed,
    microblock_tx_count: block.microblock_tx_count,
  };
}

/** A valid `height_or_hash` → the block to read; null for a height the index cannot hold. */
function parseLocator(value: string | number): BlockLocator | null {
  if (value === 'latest') return { latest: true };
  if (typeof value === 'number') return value > MAX_INT ? null : { height: value };
  return { hash: value.toLowerCase() };
}

/** The ETag of a block named by height or `latest`: valid while the tip stays. */
const blockTag = (tip: string, heightOrLatest: number | 'latest') => `${tip}:${String(heightOrLatest)}`;

export const blockRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  app.get(
    '/extended/v2/blocks/:height_or_hash',
    {
      schema: {
        operationId: 'get_block',
        summary: 'Get block',
        description:
          'A block by height, block hash, index block hash, or `latest` for the highest canonical block.',
        tags: ['Blocks'],
        params: Type.Object({ height_or_hash: HeightOrHashParam }),
        response: { 200: BlockV2, ...errorResponses },
      },
      preValidation: checkHeightOrHash,
      preHandler: etag(async (request) => {
        const value = (request.params as { height_or_hash: string | number }).height_or_hash;
        // Only tags that name one block for good: latest, a height, or an index block hash.
        if (value !== 'latest' && typeof value !== 'number') return null;
        const state = await cachedChainState(store);
        return state.index_block_hash ? blockTag(state.index_block_hash, value) : null;
      }),
    },
    async (request, reply) => {
      const locator = parseLocator(request.params.height_or_hash);
      const block = locator && (await findCanonicalBlock(store.sql, locator));
      if (!block) throw new NotFoundError('Block not found');
      if (locator && 'latest' in locator) {
        // The latest block is the tip: newer than the cached chain state when ingest (in another process,
        // on another database) moved on since; the answer is tagged with the block it carries.
        chainTipSeen(store, block.index_block_hash);
        if (reply.hasHeader('etag')) reply.header('etag', `"${blockTag(block.index_block_hash, 'latest')}"`);
      }
      return blockV2(block);
    },
  );

  app.get(
    '/extended/v1/block/by_burn_block_height/:burn_block_height',
    {
      config: { deprecated: true },
      schema: {
        operationId: 'get_block_by_burn_block_height',
        summary: 'Get block by burnchain block height',
        description:
          'The Stacks block anchored at a burnchain height (the canonical one, else the highest). Deprecated in favour of the block list.',
        tags: ['Blocks'],
        deprecated: true,
        params: Type.Object({ burn_block_height: BurnBlockHeightParam }),
        response: { 200: BlockV1, ...errorResponses },
      },
      preHandler: etag(async () => {
        const state = await cachedChainState(store);
        return state.block_height > 0 ? state.microblock_hash || state.index_block_hash : null;
      }),
    },
    async (request) => {
      const height = request.params.burn_block_height;
      const block = height <= MAX_INT ? await findBlockByBurnHeight(store.sql, height) : undefined;
      if (!block) throw new NotFoundError('cannot find block by height');
      return blockV1(block);
    },
  );
};

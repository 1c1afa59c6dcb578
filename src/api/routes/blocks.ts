import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type, { type TProperties } from 'typebox';
import { blockAnswers, v1BlockAnswers } from '../answers/block.js';
import { microblockAnswers } from '../answers/microblock.js';
import { BlockV1, BlockV2, Microblock } from '../schemas/blocks.js';
import { errorResponses } from '../schemas/common.js';
import {
  BlockHashParam,
  BlockHeightParam,
  BurnBlockHashParam,
  BurnBlockHeightParam,
  HeightOrHashParam,
  MicroblockHashParam,
  checkHeightOrHash,
} from '../schemas/params.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

export const blockRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const blocks = blockAnswers(store);
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
      onRequest: answerFromCache(blocks.cache),
    },
    async (request, reply) =>
      send(request, reply, await blocks.block(request, request.params.height_or_hash)),
  );
};

/**
 * A v1 block route's schema: the v1 block, named by `params`; deprecated by upstream (answers carry a
 * `Warning: 299`) in favour of the v2 block and the burn block's blocks.
 */
const v1BlockRoute = <Params extends TProperties>(
  operation: { operationId: string; summary: string; description: string },
  params: Params,
) => ({
  config: { deprecated: true },
  schema: {
    ...operation,
    description: `${operation.description} The canonical block, else the highest. Deprecated.`,
    tags: ['Blocks'],
    deprecated: true,
    params: Type.Object(params),
    response: { 200: BlockV1, ...errorResponses },
  },
});

/** The v1 block routes: one answer, the block named four ways; what live push sends as `block`. */
export const v1BlockRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const blocks = v1BlockAnswers(store);

  app.get(
    '/extended/v1/block/by_burn_block_height/:burn_block_height',
    {
      ...v1BlockRoute(
        {
          operationId: 'get_block_by_burn_block_height',
          summary: 'Get block by burnchain block height',
          description: 'The Stacks block anchored at a burnchain height (the last one of a Nakamoto tenure).',
        },
        { burn_block_height: BurnBlockHeightParam },
      ),
      onRequest: answerFromCache(blocks.caches.byBurnHeight),
    },
    async (request, reply) =>
      send(request, reply, await blocks.blockByBurnHeight(request, request.params.burn_block_height)),
  );

  app.get(
    '/extended/v1/block/by_height/:height',
    {
      ...v1BlockRoute(
        {
          operationId: 'get_block_by_height',
          summary: 'Get block by height',
          description: 'The block at a height.',
        },
        { height: BlockHeightParam },
      ),
      onRequest: answerFromCache(blocks.caches.v1),
    },
    async (request, reply) =>
      send(request, reply, await blocks.blockByHeight(request, request.params.height)),
  );

  app.get(
    '/extended/v1/block/by_burn_block_hash/:burn_block_hash',
    {
      ...v1BlockRoute(
        {
          operationId: 'get_block_by_burn_block_hash',
          summary: 'Get block by burnchain block hash',
          description: 'The Stacks block anchored in a burnchain block (the last one of a Nakamoto tenure).',
        },
        { burn_block_hash: BurnBlockHashParam },
      ),
      onRequest: answerFromCache(blocks.caches.v1),
    },
    async (request, reply) =>
      send(request, reply, await blocks.blockByBurnBlockHash(request, request.params.burn_block_hash)),
  );

  app.get(
    '/extended/v1/block/:hash',
    {
      ...v1BlockRoute(
        {
          operationId: 'get_block_by_hash',
          summary: 'Get block by hash',
          description: 'The block of a block hash (not an index block hash).',
        },
        { hash: BlockHashParam },
      ),
      onRequest: answerFromCache(blocks.caches.v1),
    },
    async (request, reply) => send(request, reply, await blocks.blockByHash(request, request.params.hash)),
  );
};

/** The microblock (epoch 2.x): what live push sends as `microblock`. */
export const microblockRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const microblocks = microblockAnswers(store);
  app.get(
    '/extended/v1/microblock/:hash',
    {
      schema: {
        operationId: 'get_microblock_by_hash',
        summary: 'Get microblock',
        description:
          'A microblock (epoch 2.x) by its hash: unconfirmed, confirmed or orphaned, with its canonical transactions.',
        tags: ['Microblocks'],
        params: Type.Object({ hash: MicroblockHashParam }),
        response: { 200: Microblock, ...errorResponses },
      },
      onRequest: answerFromCache(microblocks.cache),
    },
    async (request, reply) =>
      send(request, reply, await microblocks.microblock(request, request.params.hash)),
  );
};

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { blockAnswers } from '../answers/block.js';
import { BlockV1, BlockV2 } from '../schemas/blocks.js';
import { errorResponses } from '../schemas/common.js';
import { BurnBlockHeightParam, HeightOrHashParam, checkHeightOrHash } from '../schemas/params.js';
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
      onRequest: answerFromCache(blocks.caches.v2),
    },
    async (request, reply) =>
      send(request, reply, await blocks.block(request, request.params.height_or_hash)),
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
      onRequest: answerFromCache(blocks.caches.byBurnHeight),
    },
    async (request, reply) =>
      send(request, reply, await blocks.blockByBurnHeight(request, request.params.burn_block_height)),
  );
};

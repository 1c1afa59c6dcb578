import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { NotFoundError } from '../../errors.js';
import {
  batchedBlockByBurnHeightReads,
  batchedCanonicalBlockReads,
  type BlockLocator,
} from '../../store/read/blocks.js';
import { cachedChainState, chainTipSeen } from '../../store/read/chain-state.js';
import { blockTag, tipOfBlockTag, tipTag } from '../cache/etag.js';
import { keptByEtag } from '../cache/kept-answers.js';
import { blockV1Body, blockV2 } from '../render/blocks.js';
import { BlockV1, BlockV2 } from '../schemas/blocks.js';
import { errorResponses } from '../schemas/common.js';
import { BurnBlockHeightParam, HeightOrHashParam, MAX_INT, checkHeightOrHash } from '../schemas/params.js';
import type { RouteOptions } from './route-options.js';
import { jsonAnswer, serializeWith } from './json-reply.js';

/**
 * What a valid `height_or_hash` names: `latest`, a height, or a hash in lower case (`checkHeightOrHash` gave it
 * its 0x): the answer's ETag and the block read are both made from it.
 */
const blockName = (value: string | number): number | string =>
  typeof value === 'number' || value === 'latest' ? value : value.toLowerCase();

/** A valid `height_or_hash` → the block to read; null for a height the index cannot hold. */
function parseLocator(value: string | number): BlockLocator | null {
  const name = blockName(value);
  if (name === 'latest') return { latest: true };
  if (typeof name === 'number') return name > MAX_INT ? null : { height: name };
  return { hash: name };
}

// Block answers are kept by their ETag (cache/kept-answers.ts): a block's answer only changes when the tip does
// (a reorg can change which block a height or burn height names, and whether the block of a hash is
// canonical), so while the tip stays one rendering serves every request for it.
//
// Bounds: the recent working set, not the whole chain. A v2 block is ~1 KB: 1 MB keeps ~1,000 of them (the tip
// and the recent blocks explorers poll). A v1 block by burn height lists all its tx ids, ~15 KB on the 1M-tx
// bench chain: 16 MB keeps ~1,000 of those, and an answer up to 4 MB (a quarter of the bound, ~60,000 tx ids)
// can be kept. A client walking every height (or hash) of a long chain is served mostly from the database, as it
// should be: the bench's cold cases cycle over more heights than these bounds hold (on the 1M chain), so they
// measure reads, but not only: 23% of the burn-height walk's requests (2,535 heights, ~38 MB of answers) meet an
// answer kept on its second ask before it is evicted (bench finding F-read-burn-height-read-alone).
// Memory is spent only on heights asked for, and is freed at the next block.
//
// Kept on the second ask (cache/kept-answers.ts): a walk over more heights than a bound holds would otherwise
// copy every answer into memory only to evict it unread (the bench's cold cases: on the 1M chain every
// request of the burn-height walk copied its ~15 KB answer and evicted one).
const V2_BLOCK_BOUND = 1024 * 1024;
const V2_BLOCK_TYPICAL_BYTES = 1536;
const V1_BURN_HEIGHT_BOUND = 16 * 1024 * 1024;
const V1_BURN_HEIGHT_TYPICAL_BYTES = 15 * 1024;

export const blockRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  // Tagged by the tip and what the path names (latest, a height, a hash): each answer stays the same while the
  // tip does. Upstream tags index-block-hash paths only, as its tag is read by index hash; a block hash is
  // tagged and kept here too, since both are 64 hex digits and telling them apart would cost the read the
  // tag saves (test/conformance/deliberate-differences.ts, "ETags").
  const keptV2 = keptByEtag(
    async (request) => {
      const value = (request.params as { height_or_hash: string | number }).height_or_hash;
      const state = await cachedChainState(store);
      return state.index_block_hash ? blockTag(state.index_block_hash, blockName(value)) : null;
    },
    {
      maxBytes: V2_BLOCK_BOUND,
      keepOnSecondAsk: true,
      typicalAnswerBytes: V2_BLOCK_TYPICAL_BYTES,
      generationOf: tipOfBlockTag,
    },
  );
  const keptByBurnHeight = keptByEtag(tipTag(store), {
    maxBytes: V1_BURN_HEIGHT_BOUND,
    keepOnSecondAsk: true,
    typicalAnswerBytes: V1_BURN_HEIGHT_TYPICAL_BYTES,
  });
  // the misses of requests that arrive together (the cold walk of a client, a bench) are read by one statement
  const readBlock = batchedCanonicalBlockReads(() => store.sql);
  const readBlockAtBurnHeight = batchedBlockByBurnHeightReads(() => store.sql);
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
      ...keptV2,
    },
    async (request, reply) => {
      const locator = parseLocator(request.params.height_or_hash);
      const block = locator && (await readBlock(locator));
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
      ...keptByBurnHeight,
    },
    async (request, reply) => {
      const height = request.params.burn_block_height;
      const block = height <= MAX_INT ? await readBlockAtBurnHeight(height) : undefined;
      if (!block) throw new NotFoundError('cannot find block by height');
      return jsonAnswer<BlockV1>(
        reply,
        blockV1Body(block, (value) => serializeWith(reply, BlockV1, value)),
      );
    },
  );
};

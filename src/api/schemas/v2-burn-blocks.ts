import Type from 'typebox';
import { BlockV2 } from './blocks.js';
import { errorResponses } from './common.js';
import { DEMO } from './examples.js';
import { Page, pageQuery } from './lists.js';
import { HeightOrHashParam, checkHeightOrHash } from './params.js';

// GET /extended/v2/burn-blocks, /extended/v2/burn-blocks/{height_or_hash} and its /blocks (docs/upstream.md
// C.3 to C.5). A burn block here is what the canonical Stacks blocks anchored in it say of it.

const BurnBlock = Type.Object(
  {
    burn_block_time: Type.Integer({
      description: 'Unix seconds, as its highest canonical Stacks block carries it',
    }),
    burn_block_time_iso: Type.String(),
    burn_block_hash: Type.String(),
    burn_block_height: Type.Integer(),
    stacks_blocks: Type.Array(Type.String(), {
      description: 'Block hashes of its canonical Stacks blocks, highest first',
    }),
    avg_block_time: Type.Number({
      description: 'Mean seconds between its consecutive Stacks blocks, to 2 decimals; 0 for one block',
    }),
    total_tx_count: Type.Integer({ description: 'Transactions of its canonical Stacks blocks' }),
  },
  { title: 'BurnBlock', description: 'A burnchain (Bitcoin) block holding canonical Stacks blocks' },
);

/** The burn block form of upstream's `height_or_hash` union (the same members, read as a burn block). */
const BurnHeightOrHashParam = Type.Union(HeightOrHashParam.anyOf, {
  description:
    'A burn block height (a whole number), a burn block hash (64 hex digits, 0x optional), or `latest` for the burn block of the highest canonical Stacks block',
  examples: [String(DEMO.burnBlockHeight)],
  'x-expects':
    'a burn block height (a whole number, 0 or more, in decimal), a burn block hash (64 hex digits, 0x optional), or "latest"',
  'x-doc-schema': (HeightOrHashParam as { 'x-doc-schema'?: object })['x-doc-schema'],
});

const BurnBlockParams = Type.Object({ height_or_hash: BurnHeightOrHashParam });

const BurnBlockListQuery = Type.Object(pageQuery('block', 'Burn blocks'));

const BurnBlockList = Page(BurnBlock, {
  title: 'BurnBlockList',
  description:
    'Burn blocks holding canonical Stacks blocks, highest first. `total` counts the canonical Stacks blocks',
});

export const getBurnBlocksRoute = {
  url: '/extended/v2/burn-blocks',
  schema: {
    operationId: 'get_burn_blocks',
    summary: 'Get burn blocks',
    description: 'Burnchain blocks that hold canonical Stacks blocks, newest first.',
    tags: ['Burn blocks'],
    querystring: BurnBlockListQuery,
    response: { 200: BurnBlockList, ...errorResponses },
  },
};

/** A height or hash holding no canonical Stacks block: 404 `Not found`. */
export const getBurnBlockRoute = {
  url: '/extended/v2/burn-blocks/:height_or_hash',
  schema: {
    operationId: 'get_burn_block',
    summary: 'Get burn block',
    description: 'A burnchain block by height, hash, or `latest`.',
    tags: ['Burn blocks'],
    params: BurnBlockParams,
    response: { 200: BurnBlock, ...errorResponses },
  },
  preValidation: checkHeightOrHash,
};

const BurnBlockBlocksQuery = Type.Object(pageQuery('block', 'Blocks'));

const BurnBlockBlocks = Page(BlockV2, {
  title: 'BurnBlockBlocks',
  description: 'The canonical Stacks blocks of a burn block, highest first',
});

/** No block at all (canonical or not) at that height or hash: 404 `Burn block not found`. */
export const getBlocksByBurnBlockRoute = {
  url: '/extended/v2/burn-blocks/:height_or_hash/blocks',
  schema: {
    operationId: 'get_blocks_by_burn_block',
    summary: 'Get blocks by burn block',
    description:
      'The canonical Stacks blocks anchored in a burnchain block, named by height, hash, or `latest`.',
    tags: ['Blocks'],
    params: BurnBlockParams,
    querystring: BurnBlockBlocksQuery,
    response: { 200: BurnBlockBlocks, ...errorResponses },
  },
  preValidation: checkHeightOrHash,
};

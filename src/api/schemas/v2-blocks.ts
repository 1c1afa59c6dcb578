import Type from 'typebox';
import { BlockV2 } from './blocks.js';
import { errorResponses } from './common.js';
import { DEMO } from './examples.js';
import { CursorPage, Page, PAGE_SIZES, pageQuery } from './lists.js';
import { HeightOrHashParam, LimitQuery, checkHeightOrHash } from './params.js';
import { Transaction } from './transactions.js';

// GET /extended/v2/blocks and /extended/v2/blocks/{height_or_hash}/transactions (docs/upstream.md C.1, C.2).

/** How far `offset` may move from the cursor block, either way: upstream's, ten block pages. */
const BLOCK_OFFSET_BOUND = 10 * PAGE_SIZES.block.max;

const BlockListQuery = Type.Object({
  limit: LimitQuery(PAGE_SIZES.block.max, PAGE_SIZES.block.fallback, 'Blocks per page'),
  offset: Type.Integer({
    minimum: -BLOCK_OFFSET_BOUND,
    maximum: BLOCK_OFFSET_BOUND,
    default: 0,
    description: `Blocks to skip below the cursor block; negative moves towards newer blocks (${-BLOCK_OFFSET_BOUND} to ${BLOCK_OFFSET_BOUND})`,
    examples: [0],
  }),
  cursor: Type.Optional(
    Type.String({
      description:
        'The index block hash of the block the page starts from (the tip when absent); one that names no canonical block is a 404',
      examples: [DEMO.indexBlockHash],
    }),
  ),
});

const BlockList = CursorPage(
  BlockV2,
  { title: 'BlockList', description: 'Canonical blocks, newest first' },
  {
    next: 'Index block hash of the block `limit` above the page’s first: the start of the newer page; null when fewer newer blocks exist',
    prev: 'Index block hash of the block `limit` below the page’s first: the start of the older page; null when there is none',
    cursor: 'Index block hash of the page’s first (newest) block; null on an empty page',
  },
);

export const getBlocksRoute = {
  url: '/extended/v2/blocks',
  schema: {
    operationId: 'get_blocks',
    summary: 'Get blocks',
    description:
      'Canonical blocks by height, newest first, paged by offset from a cursor block (the tip by default).',
    tags: ['Blocks'],
    querystring: BlockListQuery,
    response: { 200: BlockList, ...errorResponses },
  },
};

const BlockTransactionsParams = Type.Object({ height_or_hash: HeightOrHashParam });
const BlockTransactionsQuery = Type.Object(pageQuery('transaction', 'Transactions'));

const BlockTransactions = Page(Transaction, {
  title: 'BlockTransactions',
  description:
    'The canonical transactions of a block: those of the microblocks it confirms first (by sequence), then its own, by index. `total` is the number of transactions its block message carried',
});

/** A page past the last transaction, like an unknown or non-canonical block, is a 404 `Block not found`. */
export const getBlockTransactionsRoute = {
  url: '/extended/v2/blocks/:height_or_hash/transactions',
  schema: {
    operationId: 'get_block_transactions',
    summary: 'Get block transactions',
    description:
      'The transactions of a canonical block, named by height, block hash, index block hash or `latest`. An empty page is a 404.',
    tags: ['Transactions'],
    params: BlockTransactionsParams,
    querystring: BlockTransactionsQuery,
    response: { 200: BlockTransactions, ...errorResponses },
  },
  preValidation: checkHeightOrHash,
};

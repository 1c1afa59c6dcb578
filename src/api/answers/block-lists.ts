import { NotFoundError } from '../../errors.js';
import {
  findBurnBlock,
  listBlocks,
  listBlockTxs,
  listBurnBlockBlocks,
  listBurnBlocks,
  type BurnBlockLocator,
} from '../../store/read/block-lists.js';
import type { BlockLocator } from '../../store/read/blocks.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import type { Store } from '../../store/store.js';
import { AnswerCache } from '../cache/answer-cache.js';
import { burnBlock } from '../render/block-lists.js';
import { pageOf } from '../render/pages.js';
import { blockV2 } from '../render/blocks.js';
import { serializerOf } from '../render/serializer.js';
import { minedTransaction } from '../render/txs.js';
import { MAX_INT } from '../schemas/params.js';
import { getBlocksRoute, getBlockTransactionsRoute } from '../schemas/v2-blocks.js';
import {
  getBlocksByBurnBlockRoute,
  getBurnBlockRoute,
  getBurnBlocksRoute,
} from '../schemas/v2-burn-blocks.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { tipState, tipTag } from './tags.js';

// GET /extended/v2/blocks, /extended/v2/blocks/{height_or_hash}/transactions, /extended/v2/burn-blocks, one
// burn block and its /blocks (docs/upstream.md C.1-C.5). Every answer shows canonical blocks only, so it is
// tagged by the tip, as the original tags them: a client holding the tag gets its 304 before any read.
//
// Caches (docs/caching.md): each route's whole answers, under the tip and its microblock (the state the tag
// names; a microblock changes no answer here, but an answer cached across one would carry a tag no fresh answer
// has). Each page is an index range of the canonical heights (store/read/block-lists.ts), but reading and
// rendering a block's 50 txs cost 3-5 ms of CPU (the API's and PostgreSQL's) a request on a loaded machine, its
// cached answer ~0.1 ms (bench finding F-read-beyond-pages-kept). Every route here names blocks or pages over the
// whole history, as the v1 block routes do (answers/block.ts), so each caches an answer from the second ask of
// its URL: a walk over the chain caches nothing and evicts nothing.

interface PageQuery {
  limit: number;
  offset: number;
}

/**
 * A valid `height_or_hash` (`checkHeightOrHash` gave a hash its 0x) → what to read; null for a height no
 * index holds. `lowerCase`: the block routes compare hashes in lower case; the one burn block route compares
 * it as given (C.4).
 */
function locatorOf(value: string | number, lowerCase: boolean): (BlockLocator & BurnBlockLocator) | null {
  if (value === 'latest') return { latest: true };
  if (typeof value === 'number') return value > MAX_INT ? null : { height: value };
  return { hash: lowerCase ? value.toLowerCase() : value };
}

const FILE = 'src/api/answers/block-lists.ts';
const MiB = 1024 * 1024;
/** As the bench chains answer them: a page of 30 blocks (~1 KB each), a block's 50 txs (~80 KB), a burn block. */
const BLOCKS_PAGE_TYPICAL_BYTES = 32 * 1024;
const BLOCK_TXS_TYPICAL_BYTES = 80 * 1024;
const BURN_BLOCK_TYPICAL_BYTES = 1536;

const INDEX_BLOCK_HASH = /^0x[0-9a-fA-F]{64}$/;

const writeBlocks = serializerOf(getBlocksRoute.schema.response[200]);
const writeBlockTxs = serializerOf(getBlockTransactionsRoute.schema.response[200]);
const writeBurnBlocks = serializerOf(getBurnBlocksRoute.schema.response[200]);
const writeBurnBlock = serializerOf(getBurnBlockRoute.schema.response[200]);
const writeBurnBlockBlocks = serializerOf(getBlocksByBurnBlockRoute.schema.response[200]);

// eslint-disable-next-line max-lines-per-function -- a factory: the answer functions of the family and what they share, each under 80 lines
export function blockListAnswers(store: Store) {
  const cache = (name: string, maxBytes: number, typicalAnswerBytes: number) =>
    new AnswerCache({
      name,
      file: FILE,
      state: tipState(store),
      maxBytes,
      cacheOnSecondAsk: true,
      typicalAnswerBytes,
    });
  const caches = {
    blocks: cache('answers: v2 blocks', 2 * MiB, BLOCKS_PAGE_TYPICAL_BYTES),
    blockTransactions: cache("answers: v2 block's txs", 8 * MiB, BLOCK_TXS_TYPICAL_BYTES),
    burnBlocks: cache('answers: v2 burn blocks', 2 * MiB, BLOCKS_PAGE_TYPICAL_BYTES),
    burnBlock: cache('answers: v2 burn block', 1 * MiB, BURN_BLOCK_TYPICAL_BYTES),
    burnBlockBlocks: cache("answers: v2 burn block's blocks", 2 * MiB, BLOCKS_PAGE_TYPICAL_BYTES),
  };

  /** The tip's tag, and a 304 when the client holds it. */
  async function tagged(asked: Asked): Promise<{ etag?: string; held?: Answer }> {
    const etag = tipTag(await cachedChainState(store)) ?? undefined;
    return etag !== undefined && holds(asked, etag) ? { etag, held: notModified(etag) } : { etag };
  }

  async function blocks(asked: Asked, query: PageQuery & { cursor?: string }): Promise<Answer> {
    const { etag, held } = await tagged(asked);
    if (held) return held;
    // a cursor that is no index block hash names no block, and is not sent to the database (a NUL is refused)
    if (query.cursor !== undefined && !INDEX_BLOCK_HASH.test(query.cursor)) {
      throw new NotFoundError('Cursor not found');
    }
    const cursor = query.cursor?.toLowerCase() ?? null;
    const page = await listBlocks(store.sql, { ...query, cursor });
    if (!page.cursorFound) throw new NotFoundError('Cursor not found');
    const body = {
      limit: query.limit,
      offset: query.offset,
      total: page.total,
      next_cursor: page.nextCursor,
      prev_cursor: page.prevCursor,
      cursor: page.blocks[0]?.index_block_hash ?? null,
      results: page.blocks.map(blockV2),
    };
    return jsonAnswer(writeBlocks(body), etag);
  }

  /** A canonical block's txs; an empty page is the original's 404. */
  async function blockTransactions(
    asked: Asked,
    heightOrHash: string | number,
    query: PageQuery,
  ): Promise<Answer> {
    const { etag, held } = await tagged(asked);
    if (held) return held;
    const at = locatorOf(heightOrHash, true);
    const page = at ? await listBlockTxs(store.sql, at, query) : undefined;
    if (!page || page.txs.length === 0) throw new NotFoundError('Block not found');
    const body = pageOf(
      query,
      page.total,
      page.txs.map((tx) => minedTransaction(tx, { withoutAbi: true })),
    );
    return jsonAnswer(writeBlockTxs(body), etag);
  }

  async function burnBlocks(asked: Asked, query: PageQuery): Promise<Answer> {
    const { etag, held } = await tagged(asked);
    if (held) return held;
    const page = await listBurnBlocks(store.sql, query);
    const body = pageOf(query, page.total, page.burnBlocks.map(burnBlock));
    return jsonAnswer(writeBurnBlocks(body), etag);
  }

  async function oneBurnBlock(asked: Asked, heightOrHash: string | number): Promise<Answer> {
    const { etag, held } = await tagged(asked);
    if (held) return held;
    const at = locatorOf(heightOrHash, false);
    const found = at ? await findBurnBlock(store.sql, at) : undefined;
    if (!found) throw new NotFoundError('Not found');
    return jsonAnswer(writeBurnBlock(burnBlock(found)), etag);
  }

  async function burnBlockBlocks(
    asked: Asked,
    heightOrHash: string | number,
    query: PageQuery,
  ): Promise<Answer> {
    const { etag, held } = await tagged(asked);
    if (held) return held;
    const at = locatorOf(heightOrHash, true);
    const page = at ? await listBurnBlockBlocks(store.sql, at, query) : undefined;
    if (!page?.found) throw new NotFoundError('Burn block not found');
    const body = pageOf(query, page.total, page.blocks.map(blockV2));
    return jsonAnswer(writeBurnBlockBlocks(body), etag);
  }

  return {
    caches,
    blocks: (asked: Asked, query: PageQuery & { cursor?: string }) =>
      caches.blocks.made(() => blocks(asked, query)),
    blockTransactions: (asked: Asked, heightOrHash: string | number, query: PageQuery) =>
      caches.blockTransactions.made(() => blockTransactions(asked, heightOrHash, query)),
    burnBlocks: (asked: Asked, query: PageQuery) => caches.burnBlocks.made(() => burnBlocks(asked, query)),
    burnBlock: (asked: Asked, heightOrHash: string | number) =>
      caches.burnBlock.made(() => oneBurnBlock(asked, heightOrHash)),
    burnBlockBlocks: (asked: Asked, heightOrHash: string | number, query: PageQuery) =>
      caches.burnBlockBlocks.made(() => burnBlockBlocks(asked, heightOrHash, query)),
  };
}

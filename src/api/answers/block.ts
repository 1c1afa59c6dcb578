import { NotFoundError } from '../../errors.js';
import {
  batchedBlockByBurnHeightReads,
  batchedCanonicalBlockReads,
  findV1Block,
  type BlockLocator,
  type BlockWithTxs,
  type V1BlockKey,
} from '../../store/read/blocks.js';
import { cachedChainState, chainTipSeen } from '../../store/read/chain-state.js';
import type { Store } from '../../store/store.js';
import { AnswerCache } from '../cache/answer-cache.js';
import { blockV1Body, blockV2 } from '../render/blocks.js';
import { serializerOf } from '../render/serializer.js';
import { BlockV2 } from '../schemas/blocks.js';
import { MAX_INT } from '../schemas/params.js';
import { holds, jsonAnswer, notModified, redirect, type Answer, type Asked } from './answer.js';
import { blockTag, blockTipState, tipState, tipTag } from './tags.js';

// GET /extended/v2/blocks/:height_or_hash and the v1 block routes: /extended/v1/block/:hash, by_height/:height,
// by_burn_block_hash/:burn_block_hash and by_burn_block_height/:burn_block_height (one answer, named four ways).
//
// Caches (docs/caching.md): each route's whole answers. A block's answer only changes when the tip does (a reorg
// can change which block a height or burn height names, and whether the block of a hash is canonical), so while
// the tip stays one rendering serves every request for it. Bounds: the recent working set, not the whole chain.
// A v2 block is ~1 KB: 1 MB holds ~1,000 of them (the tip and the recent blocks explorers poll). A v1 block by
// burn height lists all its tx ids, ~15 KB on the 1M-tx bench chain: 16 MB holds ~1,000 of those, and an answer
// up to 4 MB (a quarter of the bound, ~60,000 tx ids) can be cached. A client walking every height (or hash) of a
// long chain is served mostly from the database, as it should be: the bench's cold cases cycle over more heights
// than these bounds hold (on the 1M chain), so they measure reads, but not only: 23% of the burn-height walk's
// requests (2,535 heights, ~38 MB of answers) meet an answer cached on its second ask before it is evicted (bench
// finding F-read-burn-height-read-alone). Cached on the second ask: a walk over more heights than a bound holds
// would otherwise copy every answer into memory only to evict it unread. Memory is spent only on heights asked
// for, and is freed at the next block. The chain state comes from its cache (store/read/chain-state.ts). The
// other v1 block routes (by hash, height, burn block hash) share one cache of the same shape and half the bound:
// live push asks each new block by hash once (src/push/payloads.ts), and a client seldom walks them.
//
// Reads: the misses of requests that arrive together (the cold walk of a client, a bench) are read by one
// statement (store/read/batched.ts).

const FILE = 'src/api/answers/block.ts';
const V2_BLOCK_BOUND = 1024 * 1024;
const V2_BLOCK_TYPICAL_BYTES = 1536;
const V1_BURN_HEIGHT_BOUND = 16 * 1024 * 1024;
const V1_BURN_HEIGHT_TYPICAL_BYTES = 15 * 1024;
const V1_BLOCK_BOUND = 8 * 1024 * 1024;

/** The 404 message of each v1 block route, upstream's (the two heights share theirs). */
const V1_NOT_FOUND: Record<V1BlockKey, string> = {
  burn_block_height: 'cannot find block by height',
  block_height: 'cannot find block by height',
  block_hash: 'cannot find block by hash',
  burn_block_hash: 'cannot find block by burn block hash',
};

/** The path of each v1 block route named by a hash, up to the hash: where one without its 0x is redirected. */
const V1_HASH_PATHS = {
  block_hash: '/extended/v1/block/',
  burn_block_hash: '/extended/v1/block/by_burn_block_hash/',
};

/**
 * What a valid `height_or_hash` names: `latest`, a height, or a hash in lower case (`checkHeightOrHash` gave it
 * its 0x): the answer's tag and the block read are both made from it.
 */
const blockName = (value: string | number): number | string =>
  typeof value === 'number' || value === 'latest' ? value : value.toLowerCase();

/** A valid `height_or_hash` → the block to read; null for a height the index cannot hold. */
function parseLocator(name: string | number): BlockLocator | null {
  if (name === 'latest') return { latest: true };
  if (typeof name === 'number') return name > MAX_INT ? null : { height: name };
  return { hash: name };
}

const writeBlockV2 = serializerOf(BlockV2);

export function blockAnswers(store: Store) {
  const v2Answers = new AnswerCache({
    name: 'answers: v2 block',
    file: FILE,
    state: blockTipState(store),
    maxBytes: V2_BLOCK_BOUND,
    cacheOnSecondAsk: true,
    typicalAnswerBytes: V2_BLOCK_TYPICAL_BYTES,
  });
  const readBlock = batchedCanonicalBlockReads(() => store.sql);

  /**
   * A block by height, hash, index hash or `latest`. Tagged by the tip and what the path names: each answer
   * stays the same while the tip does. Upstream tags index-block-hash paths only, as its tag is read by index
   * hash; a block hash is tagged (and cached) here too, since both are 64 hex digits and telling them apart
   * would cost the read the tag saves (test/conformance/deliberate-differences.ts, "ETags").
   */
  async function block(asked: Asked, heightOrHash: string | number): Promise<Answer> {
    const name = blockName(heightOrHash);
    const tip = (await cachedChainState(store)).index_block_hash;
    let tag = tip ? blockTag(tip, name) : undefined;
    if (tag !== undefined && holds(asked, tag)) return notModified(tag);
    const locator = parseLocator(name);
    const found = locator && (await readBlock(locator));
    if (!found) throw new NotFoundError('Block not found');
    if (name === 'latest') {
      // The latest block is the tip: newer than the cached chain state when ingest (in another process, on
      // another database) moved on since; the answer is tagged with the block it carries.
      chainTipSeen(store, found.index_block_hash);
      if (tag !== undefined) tag = blockTag(found.index_block_hash, 'latest');
    }
    return jsonAnswer(writeBlockV2(blockV2(found)), tag);
  }

  return {
    cache: v2Answers,
    block: (asked: Asked, heightOrHash: string | number) => v2Answers.made(() => block(asked, heightOrHash)),
  };
}

/** The v1 block routes: one answer (the block with its txs and microblocks), the block named four ways. */
export function v1BlockAnswers(store: Store) {
  const burnHeightAnswers = new AnswerCache({
    name: 'answers: block by burn block height',
    file: FILE,
    state: tipState(store),
    maxBytes: V1_BURN_HEIGHT_BOUND,
    cacheOnSecondAsk: true,
    typicalAnswerBytes: V1_BURN_HEIGHT_TYPICAL_BYTES,
  });
  const v1Answers = new AnswerCache({
    name: 'answers: v1 block',
    file: FILE,
    state: tipState(store),
    maxBytes: V1_BLOCK_BOUND,
    cacheOnSecondAsk: true,
    typicalAnswerBytes: V1_BURN_HEIGHT_TYPICAL_BYTES,
  });
  const readBlockAtBurnHeight = batchedBlockByBurnHeightReads(() => store.sql);

  /**
   * A v1 block: the block `key` names (the canonical one, else the highest), tagged like upstream's by the tip
   * and its microblock (the block lists the microblocks streamed on it). `read` reads it: the burn height
   * route's reads are batched (bench walks).
   */
  async function v1Block(
    asked: Asked,
    key: V1BlockKey,
    value: number | string,
    read: () => Promise<BlockWithTxs | undefined>,
  ): Promise<Answer> {
    const tag = tipTag(await cachedChainState(store)) ?? undefined;
    if (tag !== undefined && holds(asked, tag)) return notModified(tag);
    const found = typeof value === 'number' && value > MAX_INT ? undefined : await read();
    if (!found) throw new NotFoundError(V1_NOT_FOUND[key]);
    return jsonAnswer(blockV1Body(found), tag);
  }

  /** A v1 block by block hash or burn block hash; one given without its 0x is redirected to the path with it. */
  function v1BlockByHash(asked: Asked, key: keyof typeof V1_HASH_PATHS, given: string): Promise<Answer> {
    if (!given.startsWith('0x')) return Promise.resolve(redirect(`${V1_HASH_PATHS[key]}0x${given}`));
    const hash = given.toLowerCase();
    return v1Block(asked, key, hash, () => findV1Block(store.sql, key, hash));
  }

  return {
    caches: { byBurnHeight: burnHeightAnswers, v1: v1Answers },
    blockByBurnHeight: (asked: Asked, height: number) =>
      burnHeightAnswers.made(() =>
        v1Block(asked, 'burn_block_height', height, () => readBlockAtBurnHeight(height)),
      ),
    blockByHeight: (asked: Asked, height: number) =>
      v1Answers.made(() =>
        v1Block(asked, 'block_height', height, () => findV1Block(store.sql, 'block_height', height)),
      ),
    blockByHash: (asked: Asked, hash: string) =>
      v1Answers.made(() => v1BlockByHash(asked, 'block_hash', hash)),
    blockByBurnBlockHash: (asked: Asked, hash: string) =>
      v1Answers.made(() => v1BlockByHash(asked, 'burn_block_hash', hash)),
  };
}

import { NotFoundError } from '../../errors.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import { findMicroblock } from '../../store/read/microblocks.js';
import type { Store } from '../../store/store.js';
import { AnswerCache } from '../cache/answer-cache.js';
import { microblockV1 } from '../render/blocks.js';
import { serializerOf } from '../render/serializer.js';
import { Microblock } from '../schemas/blocks.js';
import { holds, jsonAnswer, notModified, redirect, type Answer, type Asked } from './answer.js';
import { tipState, tipTag } from './tags.js';

// GET /extended/v1/microblock/:hash.
//
// Cache (docs/caching.md): whole answers, by URL, while the tip and its microblock stay (a new microblock may
// orphan one, a block confirms them, a reorg changes whether their block is canonical). A microblock answer is
// ~1 KB (a few tx ids): 1 MiB holds ~1,000. Live push asks each new microblock once (src/push/payloads.ts);
// a second ask of the same URL under the same tip is what is cached.

const FILE = 'src/api/answers/microblock.ts';
const MICROBLOCK_BOUND = 1024 * 1024;
const MICROBLOCK_TYPICAL_BYTES = 1024;

const writeMicroblock = serializerOf(Microblock);

export function microblockAnswers(store: Store) {
  const answers = new AnswerCache({
    name: 'answers: microblock',
    file: FILE,
    state: tipState(store),
    maxBytes: MICROBLOCK_BOUND,
    cacheOnSecondAsk: true,
    typicalAnswerBytes: MICROBLOCK_TYPICAL_BYTES,
  });

  /**
   * A microblock by its hash, confirmed or not, canonical or not: tagged like upstream's by the tip and its
   * microblock. A hash given without its 0x is redirected to the path with it (upstream's).
   */
  async function microblock(asked: Asked, given: string): Promise<Answer> {
    if (!given.startsWith('0x')) return redirect(`/extended/v1/microblock/0x${given}`);
    const tag = tipTag(await cachedChainState(store)) ?? undefined;
    if (tag !== undefined && holds(asked, tag)) return notModified(tag);
    const found = await findMicroblock(store.sql, given.toLowerCase());
    if (!found) throw new NotFoundError('cannot find microblock by hash');
    return jsonAnswer(writeMicroblock(microblockV1(found)), tag);
  }

  return {
    cache: answers,
    microblock: (asked: Asked, hash: string) => answers.made(() => microblock(asked, hash)),
  };
}

import { caches } from '../../caches.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import { MempoolAggregatesCache, mempoolStateKey, type MempoolAggregates } from '../../store/read/mempool.js';
import type { Store } from '../../store/store.js';
import { AnswerCache, type StateOfAnswers } from '../cache/answer-cache.js';
import { mempoolFees, mempoolStats } from '../render/mempool.js';
import { serializerOf } from '../render/serializer.js';
import { MempoolFees, MempoolStats } from '../schemas/mempool.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';

// GET /extended/v1/tx/mempool/stats and /extended/v2/mempool/fees: both made from the same aggregates of the
// pending mempool, tagged (as upstream) by the mempool's update time.
//
// Caches (docs/caching.md): the aggregates, computed once per mempool state by one statement and shared by both
// routes (store/read/mempool.ts says how a snapshot may lag while the next is computed); and each route's whole
// answers, sent again while the snapshot stays instead of rendering and serializing it per request (most of
// these routes' cost once the aggregates are in memory). Cached per snapshot, not per tag: the tag is the
// mempool's update time, while the ages move with the tip. An answer is 1-2 KB: the bound only limits the URLs
// that differ by query parameters the routes ignore.

const FILE = 'src/api/answers/mempool.ts';
const ANSWERS_BOUND = 256 * 1024;

const writeStats = serializerOf(MempoolStats);
const writeFees = serializerOf(MempoolFees);

export function mempoolAnswers(store: Store) {
  const aggregates = new MempoolAggregatesCache();
  caches.join(
    {
      name: 'mempool aggregates',
      layer: 'aggregates',
      key: 'the mempool state: version, tip height, update time',
      invalidatedBy: 'a mempool change or a new block (the previous snapshot is served up to 2 s meanwhile)',
      bound: 'one snapshot',
      file: FILE,
    },
    aggregates,
  );

  /** The latest snapshot of the aggregates: the one of the mempool now, or the previous one while it is made. */
  async function snapshot(): Promise<MempoolAggregates> {
    const state = await cachedChainState(store);
    return aggregates.get(store.sql, mempoolStateKey(state), performance.now());
  }

  const state: StateOfAnswers = {
    read: async () => ({ generation: (await snapshot()).key, mempool: '' }),
    invalidatedBy: 'a new snapshot of the aggregates',
  };
  const statsAnswers = new AnswerCache({
    name: 'answers: mempool stats',
    file: FILE,
    state,
    maxBytes: ANSWERS_BOUND,
  });
  const feesAnswers = new AnswerCache({
    name: 'answers: mempool fees',
    file: FILE,
    state,
    maxBytes: ANSWERS_BOUND,
  });

  /** An answer made from one snapshot, tagged by it: the body always matches its tag. */
  async function fromSnapshot(asked: Asked, write: (snapshot: MempoolAggregates) => string): Promise<Answer> {
    const current = await snapshot();
    const tag = current.mempool_updated_at;
    if (holds(asked, tag)) return notModified(tag);
    return jsonAnswer(write(current), tag);
  }

  return {
    caches: { stats: statsAnswers, fees: feesAnswers },
    /** Per pending tx type: the count, and percentiles of the fee, the age in blocks and the size. */
    stats: (asked: Asked) => statsAnswers.made(() => fromSnapshot(asked, (s) => writeStats(mempoolStats(s)))),
    /** Fee priorities from the pending txs' fees, over all of them and per type. */
    fees: (asked: Asked) => feesAnswers.made(() => fromSnapshot(asked, (s) => writeFees(mempoolFees(s)))),
  };
}

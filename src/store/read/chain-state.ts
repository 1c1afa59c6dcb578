import { caches } from '../../caches.js';
import type { Sql } from '../db.js';
import type { Store } from '../store.js';
import type { ChainTip } from '../schema/rows.js';
import { chainTipColumns } from '../schema/tables.js';
import { statement } from '../statement.js';

/** The chain state: the tip and the mempool's version, what ETags and `unanchored` reads key on. */
export interface ChainState extends ChainTip {
  mempool_version: number;
  /** `extract(epoch from mempool_updated_at)` as text: the mempool ETag */
  mempool_updated_at: string;
}

const readChainState = statement<ChainState, []>(`
  SELECT ${Object.keys(chainTipColumns).join(', ')},
    mempool_version, extract(epoch FROM mempool_updated_at)::text AS mempool_updated_at
  FROM chain_tip`);

/** The chain tip and the mempool version: what ETags and `unanchored` reads key on. */
async function getChainState(sql: Sql): Promise<ChainState> {
  const [state] = await readChainState(sql);
  // The migrations create the one row and nothing deletes it; an answer without it is a fault, said so here
  // rather than as a TypeError in whichever reader looks first.
  if (!state) throw new Error('the chain_tip table holds no row');
  return state;
}

/** Channel ingest notifies (in each message's transaction, so at commit) when the chain state may have changed. */
export const CHAIN_STATE_CHANNEL = 'chain_state';

/**
 * How long a cached chain state is trusted without a word from ingest: the fallback should a notification
 * be lost (the listening connection down), and on a streaming replica, which replays no NOTIFY, what bounds
 * a reader's staleness beyond the replica's lag (bench/split-staleness.ts: a client revalidating
 * `blocks/latest` got the previous tip for up to 1,012 ms with 1 s here). At most ten reads of one row a
 * second under load, none when idle.
 * @internal exported for the tests that wait it out
 */
export const CHAIN_STATE_TTL_MS = 100;

/**
 * The chain state, read once and shared by the requests that follow instead of one query each (the ETag
 * checks of most routes ask for it first: on a 2-core machine that query's round trip cost as much as the
 * answer's own reads). Ingest in this process drops it after each message it applies; ingest in another
 * process notifies on CHAIN_STATE_CHANNEL (see `listenForChainState`); past CHAIN_STATE_TTL_MS it is read
 * again anyway.
 */
class ChainStateCache {
  /** told after each change ingest announces (live push: src/push) */
  readonly listeners = new Set<() => void>();
  private state: Promise<ChainState> | undefined;
  /** The tip of `state` once it is read. */
  private tip: string | undefined;
  private loadedAt = 0;

  get(sql: Sql, now: number): Promise<ChainState> {
    if (this.state && now - this.loadedAt < CHAIN_STATE_TTL_MS) return this.state;
    const loading = getChainState(sql);
    this.state = loading;
    this.tip = undefined;
    this.loadedAt = now;
    loading.then(
      (state) => {
        if (this.state === loading) this.tip = state.index_block_hash;
      },
      // a failed read (database down) is not kept: the next request tries again
      () => {
        if (this.state === loading) this.state = undefined;
      },
    );
    return loading;
  }

  /** A read in flight when the state changed is still answered to those who asked, but not kept. */
  invalidate(): void {
    this.state = undefined;
    this.tip = undefined;
  }

  /** A read found the tip at `indexBlockHash`: a state naming another tip is outdated (or the read was). */
  seen(indexBlockHash: string): void {
    if (this.tip !== undefined && this.tip !== indexBlockHash) this.invalidate();
  }
}

// One cache per database (stores wrapping the same database share it).
const perDatabase = new WeakMap<object, ChainStateCache>();

function cacheOf(store: Store): ChainStateCache {
  let cache = perDatabase.get(store.db);
  if (!cache) {
    cache = new ChainStateCache();
    perDatabase.set(store.db, cache);
    caches.join(
      {
        name: 'chain state',
        layer: 'chain state',
        key: 'the database',
        invalidatedBy: `ingest's commit (in this process, or its NOTIFY), a read finding another tip, ${CHAIN_STATE_TTL_MS} ms of age`,
        bound: 'one row per database',
        file: 'src/store/read/chain-state.ts',
      },
      cache,
    );
  }
  return cache;
}

/** The chain state as of at most CHAIN_STATE_TTL_MS ago, or as of the last change ingest announced. */
export function cachedChainState(store: Store): Promise<ChainState> {
  return cacheOf(store).get(store.sql, performance.now());
}

/**
 * A read found the chain tip at `indexBlockHash` (the latest block, the status): when the cached state names
 * another tip it is dropped, so no answer is tagged, and no If-None-Match answered 304, from a tip this
 * process knows is gone. Where no writer in this process or NOTIFY says so (a replica, a notification not yet
 * arrived), this is how a reader learns of a new tip before the cached state expires. A read older than the
 * cached state only costs one more read of the state.
 */
export function chainTipSeen(store: Store, indexBlockHash: string): void {
  cacheOf(store).seen(indexBlockHash);
}

/** Ingest changed the chain state (called after its transaction committed): dropped, and listeners told. */
export function chainStateChanged(store: Store): void {
  const cache = cacheOf(store);
  cache.invalidate();
  for (const listener of cache.listeners) listener();
}

/**
 * Calls `listener` after each change ingest announces to this process: its own ingest's commits, and the
 * NOTIFY of a writer in another process (`listenForChainState`). A replica hears neither: its readers look
 * at `cachedChainState` instead. Returns the function that stops the calls.
 */
export function onChainStateChange(store: Store, listener: () => void): () => void {
  const { listeners } = cacheOf(store);
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * A reader has read data newer than the cached state may be (a replica, where no announcement comes): the
 * state is dropped, so the answers asked next are tagged and kept under the state they were read in.
 */
export function chainStateOutdated(store: Store): void {
  cacheOf(store).invalidate();
}

/**
 * Drops the cached chain state whenever a writer in another process announces a change (PostgreSQL only:
 * PGlite is only ever written by this process). Returns the function that stops listening.
 */
export async function listenForChainState(store: Store): Promise<() => Promise<void>> {
  if (store.engine !== 'postgres') return async () => {};
  const invalidate = () => chainStateChanged(store);
  // onlisten runs again after a reconnect: what was missed meanwhile is covered by dropping the state
  const { unlisten } = await store.db.sql.listen(CHAIN_STATE_CHANNEL, invalidate, invalidate);
  return unlisten;
}

import { caches, type CacheDeclaration, type CacheRegistry, type CountedCache } from '../../caches.js';
import type { Answer, Body, JsonText } from '../answers/answer.js';
import { ENTRY_BYTES, cachedBody, cachedBodyBytes, type CachedBody } from './entry-bytes.js';
import { OldestFirst } from './oldest-first.js';

// Whole answers cached by URL. An answer is a function of its URL and the chain state it was made under (the
// tip, its microblock stream, and for an answer that shows it the mempool), so the body sent once can be sent
// again to any client asking the same URL under the same state, without reading or rendering anything. For the
// large account pages this is most of the cost: a 94 KB transactions_with_transfers page cost ~0.9 ms of API
// CPU and ~0.25 ms of PostgreSQL to build (bench finding F-api-kept-answers), while sending a ready Buffer of
// that size costs what a bare route sending a constant does. Each entry carries the ETag it went out with, and
// If-None-Match is answered against that tag.
//
// Never from another state: an entry is found only under the generation it was made under (`CacheState`); the
// first request that reads another (the chain state changed: local ingest dropped the cached state, another
// process's NOTIFY did, or the state's 100 ms TTL re-read found a new tip) drops every entry, and an entry that
// showed the mempool is used only while the mempool version stays. A body is cached only if the state is
// unchanged once it is built: a read that raced with ingest (the reads ran on the new state, the tag was the
// old one) is sent as it is but not cached. So a cached answer is never staler than the ETag it is sent under:
// both last until this process learns of the change (docs/deploy.md, "How stale a reader is").
//
// Served before validation: the route's `onRequest` hook (routes/send.ts, `answerFromCache`) looks the URL up
// and sends the entry, so a cached URL costs neither its parameters' validation nor the hooks between (bench
// finding F-api-kept-before-validation). Every URL cached passed validation when its answer was made, and
// validation is a function of the URL alone.
//
// Bound: `maxBytes` per route (8 MB by default: ~85 of the largest 94 KB pages, or thousands of small answers),
// counted by what each entry retains (entry-bytes.ts): its body (text when small), plus its key (the URL), its
// own tag and the objects holding them, so that many small answers (a tx: ~2 KB, its URL ~90 characters and
// tag 64, ~3.4 KB in all) are counted at what they hold; the oldest answer leaves first; an answer larger than a
// quarter of the bound is never cached. Every route's answers also count against the process's bound of all
// caches (CACHE_MAX_MB, src/caches.ts), which takes from the cache holding the most.

const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The chain state an answer is made under: `generation`, what every answer of the cache shares (the tip, for
 * most; a new one drops them all), and `mempool`, the mempool version (a change drops only the answers that
 * showed the mempool).
 */
export interface CacheState {
  generation: string;
  mempool: string;
}

/** How a cache reads the state its answers depend on, and what that makes stale, in words (docs/caching.md). */
export interface StateOfAnswers {
  /** the state now; null before there is one (no block yet): nothing is cached */
  read(): Promise<CacheState | null>;
  invalidatedBy: string;
}

/** A cached answer: its body, the tag it went out with, and the mempool version when it showed the mempool. */
export interface CachedAnswer {
  body: CachedBody;
  /** (always set by `add`; entries set by generation alone may go without) */
  etag?: string;
  mempool?: string;
}

export interface AnswerCacheOptions {
  /** the row of docs/caching.md, and the file that declares the cache */
  name: string;
  file: string;
  /** the state its answers are made under (none: only `get`/`set`, by generation) */
  state?: StateOfAnswers;
  /** whether its answers show the mempool (`readsMempool`): every one, some of them, or none (absent) */
  showsMempool?: 'every answer' | 'some answers';
  /** the bound of the route's answers (DEFAULT_MAX_BYTES when not given) */
  maxBytes?: number;
  /**
   * An answer is cached only when its URL is asked for the second time under a generation: the URLs asked once
   * are remembered (the latest `2 * maxBytes / typicalAnswerBytes` of them, two to three times the answers the
   * bound holds: 8,192 for 8 MB of ~2 KB tx answers, which it holds ~2,500 of), so a walk over more distinct
   * URLs than that (a crawler over the history, the bench's cold cases) caches nothing and evicts nothing: the
   * answers asked again stay, and the walk costs no copy of its bodies. Measured on the small chain's cold tx
   * walk (9,646 ids, more than 8 MB of answers), caching every miss cost ~8 µs of API CPU a request in this
   * file alone (`bench/profile-http.ts`), plus the garbage collection of 8 MB of bodies turned over every
   * ~0.3 s (bench finding F-api-keep-on-second-ask).
   */
  cacheOnSecondAsk?: boolean;
  /** the size of a typical answer of the route, body, key and tag (2 KB when not given) */
  typicalAnswerBytes?: number;
  /** the registry and bound it counts against (the process's when not given) */
  registry?: CacheRegistry;
}

/** One route's answers: URL → answer, all made under one generation. */
export class AnswerCache implements CountedCache {
  readonly maxBytes: number;
  private generation: string | undefined;
  private readonly entries = new Map<string, CachedAnswer>();
  private cachedBytes = 0;
  /** URLs asked once under the generation and not cached (with `cacheOnSecondAsk`), oldest first */
  private readonly askedOnce: Set<string> | undefined;
  private readonly maxAskedOnce: number;
  private readonly oldestAskedOnce: OldestFirst<string> | undefined;
  private readonly oldestEntry = new OldestFirst(this.entries, (key) => {
    this.cachedBytes -= sizeOf(key, this.entries.get(key)!);
  });
  private readonly registry: CacheRegistry;
  private readonly state: StateOfAnswers | undefined;
  private readonly name: string;
  private readonly showsMempool: boolean;

  constructor(options: AnswerCacheOptions) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.state = options.state;
    this.name = options.name;
    this.showsMempool = options.showsMempool !== undefined;
    this.registry = options.registry ?? caches;
    this.registry.join(declaration(options, this.maxBytes), this);
    this.askedOnce = options.cacheOnSecondAsk ? new Set() : undefined;
    this.oldestAskedOnce = this.askedOnce && new OldestFirst(this.askedOnce);
    this.maxAskedOnce = Math.max(1, Math.floor((2 * this.maxBytes) / (options.typicalAnswerBytes ?? 2048)));
  }

  // ---- a request's side: what the route's hooks and `send` call ----

  /** The answer cached for `url` under the state now, if any. */
  async lookup(url: string): Promise<(CachedAnswer & { etag: string }) | undefined> {
    const state = await this.state?.read();
    if (!state) return undefined;
    const cached = this.get(state.generation, url);
    if (cached?.etag === undefined) return undefined;
    return cached.mempool === undefined || cached.mempool === state.mempool
      ? (cached as CachedAnswer & { etag: string })
      : undefined;
  }

  /**
   * Makes an answer (`make`) and, when the state did not change while it was made, marks it cacheable under
   * that state: `send` then caches it (`add`). Only a tagged 200 answer is cached.
   */
  async made(make: () => Promise<Answer>): Promise<Answer> {
    const before = await this.state?.read();
    const answer = await make();
    if (!before || answer.status !== 200 || answer.etag === undefined || answer.siblingMayChange) {
      return answer;
    }
    if (answer.readsMempool && !this.showsMempool) {
      // the page of caches would say the mempool plays no part (a wiring mistake, found by any test)
      throw new Error(`${this.name}: an answer shows the mempool, and the cache does not declare it`);
    }
    const after = await this.state!.read();
    if (after?.generation !== before.generation || after.mempool !== before.mempool) return answer;
    answer.cacheable = { cache: this, state: before };
    return answer;
  }

  /**
   * Caches `answer` (made cacheable by `made`) for `url` when admitted (`cacheOnSecondAsk`), and gives the body
   * to send: the body cached is the body sent.
   */
  add(url: string, answer: Body, state: CacheState): JsonText {
    if (!this.admits(state.generation, url)) return answer.body;
    const body = cachedBody(answer.body);
    this.set(state.generation, url, {
      body,
      etag: answer.etag!,
      mempool: answer.readsMempool ? state.mempool : undefined,
    });
    return body;
  }

  // ---- the entries, by generation ----

  /**
   * Whether an answer for `key`, made now under `generation`, is to be cached (asked before the body is
   * copied): not under an old generation; with `cacheOnSecondAsk`, only on the second ask.
   */
  admits(generation: string, key: string): boolean {
    if (generation !== this.generation) return false;
    if (this.askedOnce === undefined || this.askedOnce.delete(key)) return true;
    this.askedOnce.add(key);
    if (this.askedOnce.size > this.maxAskedOnce) this.oldestAskedOnce?.evict();
    return false;
  }

  /** The answer cached for `key` under `generation`; a new generation drops everything cached under the previous one. */
  get(generation: string, key: string): CachedAnswer | undefined {
    if (generation !== this.generation) {
      this.clear();
      this.generation = generation;
      return undefined;
    }
    return this.entries.get(key);
  }

  /**
   * Caches `answer` for `key` under `generation` (ignored when that is no longer the current one, or too large),
   * its body as `cachedBody` makes it (text when small, else bytes in a store of their own).
   */
  set(generation: string, key: string, answer: CachedAnswer): void {
    const size = sizeOf(key, answer);
    if (generation !== this.generation || size > this.maxBytes / 4) return;
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.cachedBytes -= sizeOf(key, previous);
    }
    while (this.cachedBytes + size > this.maxBytes) {
      if (this.oldestEntry.evict() === undefined) break;
    }
    if (!this.registry.makeRoom(size)) return;
    this.entries.set(key, { ...answer, body: cachedBody(answer.body) });
    this.cachedBytes += size;
  }

  evictOldest(): boolean {
    return this.oldestEntry.evict() !== undefined;
  }

  private clear(): void {
    this.entries.clear();
    this.askedOnce?.clear();
    this.cachedBytes = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.cachedBytes;
  }
}

/**
 * What an entry retains: its body (as `cachedBody` makes it), its key, tag and mempool version (ASCII: URLs as
 * Fastify gives them, hex, decimals), and the objects holding them.
 */
const sizeOf = (key: string, answer: CachedAnswer) =>
  cachedBodyBytes(answer.body) +
  key.length +
  (answer.etag?.length ?? 0) +
  (answer.mempool?.length ?? 0) +
  ENTRY_BYTES;

const mempoolClause = {
  'every answer': '; a mempool change',
  'some answers': '; a mempool change, for an answer that shows the mempool',
  none: '',
};

/** The row of docs/caching.md of a route's answer cache. */
function declaration(options: AnswerCacheOptions, maxBytes: number): CacheDeclaration {
  const mib = maxBytes / (1024 * 1024);
  const size = mib >= 1 ? `${mib} MiB` : `${maxBytes / 1024} KiB`;
  return {
    name: options.name,
    layer: 'answers',
    key: 'the URL',
    invalidatedBy: `${options.state?.invalidatedBy ?? 'a new generation'}${mempoolClause[options.showsMempool ?? 'none']}`,
    bound: `${size}${options.cacheOnSecondAsk ? ', from the second ask of a URL' : ''}`,
    file: options.file,
  };
}

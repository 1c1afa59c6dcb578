import { c32Caches } from './chain/c32.js';
import { settings } from './settings.js';

// Every cache of the process joins one registry, `caches`, with what docs/caching.md says of it: its name, the
// layer of the read path it sits in, what an entry is found by, what makes an entry stale, how much it holds
// and its file. The page has one row per name, and test/api/caching-page.test.ts fails when a server holds a
// cache the page does not list (or the page lists one no server holds).
//
// The registry is also the bound of the caches' memory as a whole (CACHE_MAX_MB): a cache that counts what its
// entries retain (cached answers, renderings) asks `makeRoom` before it adds an entry, and while all of them
// together would hold more than the bound, the one holding the most gives back its oldest entry. So a flood of
// distinct URLs on one route evicts that route's answers first, and the other routes keep theirs.
//
// Caches are held weakly: those of an API server that was closed (tests build many) are collected with it and
// stop counting.

/** A cache as docs/caching.md lists it (one row per `name`). */
export interface CacheDeclaration {
  /** unique: the row of the page */
  name: string;
  /** the step of the read path it saves (docs/caching.md, "Layers") */
  layer: 'access control' | 'answers' | 'chain state' | 'renderings' | 'aggregates' | 'memos' | 'status';
  /** what an entry is found by */
  key: string;
  /** what makes an entry stale: it is then dropped, or no longer used */
  invalidatedBy: string;
  /** how much it holds at most */
  bound: string;
  /** the file that declares it, from the repository's root */
  file: string;
}

/** A cache counted against CACHE_MAX_MB: what its entries retain, and how it gives back its oldest one. */
export interface CountedCache {
  /** what its entries retain, as counted by the cache */
  readonly bytes: number;
  /** drops its oldest entry; false when it holds none */
  evictOldest(): boolean;
}

interface Member {
  declaration: CacheDeclaration;
  cache: WeakRef<object>;
  counted: boolean;
}

const isCounted = (cache: object): cache is CountedCache => 'evictOldest' in cache && 'bytes' in cache;

export class CacheRegistry {
  private readonly members = new Set<Member>();

  constructor(private maxBytes: number) {}

  /** Adds a cache; one that counts what it holds (`CountedCache`) also takes part in the memory bound. */
  join(declaration: CacheDeclaration, cache: object): void {
    this.members.add({ declaration, cache: new WeakRef(cache), counted: isCounted(cache) });
  }

  /** The declarations of the caches alive now, one per name. */
  held(): CacheDeclaration[] {
    const byName = new Map<string, CacheDeclaration>();
    for (const member of this.members) {
      if (member.cache.deref() === undefined) this.members.delete(member);
      else byName.set(member.declaration.name, member.declaration);
    }
    return [...byName.values()];
  }

  get bound(): number {
    return this.maxBytes;
  }

  /** Changes the bound (the API server sets CACHE_MAX_MB); what is over it leaves at the next `makeRoom`. */
  setBound(maxBytes: number): void {
    this.maxBytes = maxBytes;
  }

  /** What the counted caches hold, in all. */
  get bytes(): number {
    let total = 0;
    for (const cache of this.live()) total += cache.bytes;
    return total;
  }

  /**
   * Makes room for `size` more bytes: evicts the oldest entries of the largest caches until the total fits.
   * False when the entry cannot fit at all (larger than the bound): it is not to be cached.
   */
  makeRoom(size: number): boolean {
    if (size > this.maxBytes) return false;
    let total = this.bytes;
    while (total + size > this.maxBytes) {
      let largest: CountedCache | undefined;
      for (const cache of this.live())
        if (largest === undefined || cache.bytes > largest.bytes) largest = cache;
      if (largest === undefined) return true;
      const before = largest.bytes;
      if (!largest.evictOldest()) return true;
      total -= before - largest.bytes;
    }
    return true;
  }

  /** The counted caches alive now (those collected are dropped from the list). */
  private *live(): Iterable<CountedCache> {
    for (const member of this.members) {
      if (!member.counted) continue;
      const cache = member.cache.deref();
      if (cache === undefined) this.members.delete(member);
      else yield cache as CountedCache;
    }
  }
}

/** The process's caches (one bound for all; the API server sets it from CACHE_MAX_MB). */
export const caches = new CacheRegistry(settings.CACHE_MAX_MB.default * 1024 * 1024);

// src/chain imports nothing local: the address codec's caches join here.
caches.join(c32Caches.declaration, c32Caches);

import { settings } from '../../settings.js';

// The memory of every cache of this folder, bounded as a whole (CACHE_MAX_MB), and counted by what an entry
// really retains.
//
// What an entry retains: its body's backing store, not its length. A Buffer under 4 KB made by `Buffer.from`
// or `Buffer.allocUnsafe` is a slice of an 8 KB slab shared with whatever else was allocated next to it; kept,
// it keeps the whole slab alive once the rest is garbage. Measured before bodies were copied out: 200,000
// distinct valid URLs (balances, listings, contract statuses of made-up principals) took `serve` from 251 to
// 494 MB of RSS while the routes' accounting said 8 MB each: ~28,000 answers of ~350 bytes, each pinning most of
// a slab. So a kept body is copied into a backing store of its own size (`ownedBytes`), and each entry is
// counted as its body, its key and tag, plus `ENTRY_BYTES` for the objects holding them.
//
// ENTRY_BYTES, measured (Node 20, 100,000 entries of a Map from a 67-character URL to { body: Buffer, etag: 64
// characters }, after a full GC): RSS grew by body + 1,176 to 1,184 bytes an entry for bodies of 100, 348 and
// 2,000 bytes, of which the key and the tag are 131: the Map slot, the entry object, the Buffer's own objects,
// and the V8 heap's slack around them. 1,200 rounds that up; the rendered-tx caches' entries (an object and a
// string) cost less.
export const ENTRY_BYTES = 1200;

/** One cache of the process: what it holds, and how it gives back its oldest entry. */
export interface CacheMember {
  /** what its entries retain, as counted by the cache */
  readonly bytes: number;
  /** drops its oldest entry; false when it holds none */
  evictOldest(): boolean;
}

/**
 * The bound of the process's caches as a whole. Each cache keeps its own bound (per route, per kind) and, before
 * it keeps an entry, asks `makeRoom`: while the caches together would hold more than the bound, the cache holding
 * the most gives back its oldest entry. So a flood of distinct URLs on one route evicts that route's answers
 * first, and the other routes keep theirs.
 *
 * Members are held weakly: the caches of an API server that was closed (tests build many) are collected with it
 * and stop counting.
 */
export class CacheMemory {
  private readonly members = new Set<WeakRef<CacheMember>>();

  constructor(private maxBytes: number) {}

  get bound(): number {
    return this.maxBytes;
  }

  /** Changes the bound (the API server sets CACHE_MAX_MB); what is over it leaves at the next `makeRoom`. */
  setBound(maxBytes: number): void {
    this.maxBytes = maxBytes;
  }

  join(member: CacheMember): void {
    this.members.add(new WeakRef(member));
  }

  /** What the live members hold, in all. */
  get bytes(): number {
    let total = 0;
    for (const member of this.live()) total += member.bytes;
    return total;
  }

  /**
   * Makes room for `size` more bytes: evicts the oldest entries of the largest members until the total fits.
   * False when the entry cannot fit at all (larger than the bound): it is not to be kept.
   */
  makeRoom(size: number): boolean {
    if (size > this.maxBytes) return false;
    let total = this.bytes;
    while (total + size > this.maxBytes) {
      let largest: CacheMember | undefined;
      for (const member of this.live())
        if (largest === undefined || member.bytes > largest.bytes) largest = member;
      if (largest === undefined) return true;
      const before = largest.bytes;
      if (!largest.evictOldest()) return true;
      total -= before - largest.bytes;
    }
    return true;
  }

  private *live(): Iterable<CacheMember> {
    for (const ref of this.members) {
      const member = ref.deref();
      if (member === undefined) this.members.delete(ref);
      else yield member;
    }
  }
}

/** The process's caches (one bound for all; the API server sets it from CACHE_MAX_MB). */
export const cacheMemory = new CacheMemory(settings.CACHE_MAX_MB.default * 1024 * 1024);

/**
 * `body` in a backing store of its own exact size: a small Buffer shares a slab with other allocations (see
 * above), and a string is written once into such a store. A Buffer that owns its whole store is kept as it is.
 */
export function ownedBytes(body: string | Buffer): Buffer {
  if (typeof body !== 'string') {
    if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return body;
    const copy = Buffer.allocUnsafeSlow(body.length);
    body.copy(copy);
    return copy;
  }
  const copy = Buffer.allocUnsafeSlow(Buffer.byteLength(body));
  copy.write(body);
  return copy;
}

import { settings } from '../../settings.js';

// The memory of every cache of this folder, bounded as a whole (CACHE_MAX_MB), and counted by what an entry
// really retains.
//
// What an entry retains: its body's backing store, not its length. A Buffer under 4 KB made by `Buffer.from`
// or `Buffer.allocUnsafe` is a slice of an 8 KB slab shared with whatever else was allocated next to it; kept,
// it keeps the whole slab alive once the rest is garbage. Measured before: 200,000 distinct valid URLs
// (balances, listings, contract statuses of made-up principals) took `serve` from 251 to 494 MB of RSS while the
// routes' accounting said 8 MB each: ~28,000 answers of ~350 bytes, each pinning most of a slab. So a small body
// is kept as text and a large one in a store of its own (`keptBody`), and each entry is counted as its body, its
// key and tag, plus `ENTRY_BYTES` for the objects holding them.
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

/** A kept body: text when small (see `keptBody`), else bytes in a store of their own. */
export type KeptBody = string | Buffer;

/** Under this, a body is kept as text; from it up, `Buffer.from` gives a body a store of its own. */
const SMALL_BODY_BYTES = Buffer.poolSize >>> 1;

/**
 * `body` as it is to be kept. A small body is kept as a string, in the V8 heap: its garbage collector moves
 * live strings together, while a small Buffer pins its 8 KB slab, and even one copied into a store of its own
 * size is a malloc'd block that keeps a page of the C heap alive among freed ones (measured: 200,000 distinct
 * URLs with CACHE_MAX_MB=8 still grew RSS by ~120 MB when small bodies were such copies). Sending a small string
 * costs its encoding, ~1 µs. A large body (a 94 KB page) is kept as bytes in a store of its own, sent as it is.
 */
export function keptBody(body: KeptBody): KeptBody {
  if (typeof body === 'string') return body.length < SMALL_BODY_BYTES ? body : Buffer.from(body);
  if (body.length < SMALL_BODY_BYTES) return body.toString();
  if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return body;
  return Buffer.from(body);
}

/** What a kept body retains: its UTF-8 bytes (a string of one-byte characters holds one a character). */
export function keptBodyBytes(body: KeptBody): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.length;
}

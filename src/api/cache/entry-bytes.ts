// What an entry of the caches of this folder retains, as they count it against CACHE_MAX_MB (the bound of all
// caches together: src/caches.ts).
//
// What an entry retains: its body's backing store, not its length. A Buffer under 4 KB made by `Buffer.from`
// or `Buffer.allocUnsafe` is a slice of an 8 KB slab shared with whatever else was allocated next to it; cached,
// it keeps the whole slab alive once the rest is garbage. Measured before: 200,000 distinct valid URLs
// (balances, listings, contract statuses of made-up principals) took `serve` from 251 to 494 MB of RSS while the
// routes' accounting said 8 MB each: ~28,000 answers of ~350 bytes, each pinning most of a slab. So a small body
// is cached as text and a large one in a store of its own (`cachedBody`), and each entry is counted as its body, its
// key and tag, plus `ENTRY_BYTES` for the objects holding them.
//
// ENTRY_BYTES, measured (Node 20, 100,000 entries of a Map from a 67-character URL to { body: Buffer, etag: 64
// characters }, after a full GC): RSS grew by body + 1,176 to 1,184 bytes an entry for bodies of 100, 348 and
// 2,000 bytes, of which the key and the tag are 131: the Map slot, the entry object, the Buffer's own objects,
// and the V8 heap's slack around them. 1,200 rounds that up; the rendered-tx caches' entries (an object and a
// string) cost less.
export const ENTRY_BYTES = 1200;

/** A cached body: text when small (see `cachedBody`), else bytes in a store of their own. */
export type CachedBody = string | Buffer;

/** Under this, a body is cached as text; from it up, `Buffer.from` gives a body a store of its own. */
const SMALL_BODY_BYTES = Buffer.poolSize >>> 1;

/**
 * `body` as it is to be cached. A small body is cached as a string, in the V8 heap: its garbage collector moves
 * live strings together, while a small Buffer pins its 8 KB slab, and even one copied into a store of its own
 * size is a malloc'd block that keeps a page of the C heap alive among freed ones (measured: 200,000 distinct
 * URLs with CACHE_MAX_MB=8 still grew RSS by ~120 MB when small bodies were such copies). Sending a small string
 * costs its encoding, ~1 µs. A large body (a 94 KB page) is cached as bytes in a store of its own, sent as it is.
 */
export function cachedBody(body: CachedBody): CachedBody {
  if (typeof body === 'string') return body.length < SMALL_BODY_BYTES ? body : Buffer.from(body);
  if (body.length < SMALL_BODY_BYTES) return body.toString();
  if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return body;
  return Buffer.from(body);
}

/** What a cached body retains: its UTF-8 bytes (a string of one-byte characters holds one a character). */
export function cachedBodyBytes(body: CachedBody): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.length;
}

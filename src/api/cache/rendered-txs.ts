import type { RenderedTx } from '../render/addresses.js';
import type { Store } from '../../store/store.js';
import { caches, type CacheDeclaration, type CountedCache } from '../../caches.js';
import { ENTRY_BYTES } from './entry-bytes.js';
import { OldestFirst } from './oldest-first.js';

// The rendered JSON of mined transactions, cached across requests for the account listings
// (transactions_with_transfers), whose pages of 50 txs otherwise read, build and serialize the same
// immutable rows over and over (~50 µs of CPU per tx, most of such a request).
//
// What may be cached: a tx row is identified by (tx_id, index_block_hash, microblock_hash), and everything
// its rendering (without events) shows is fixed once the row is written: the decoded tx, its result and
// costs, its block's hashes and times, and the ABI of the contract it calls (deployed earlier on the same
// fork). Only its visibility flags (`canonical`, `microblock_canonical`) change, on reorgs. So only
// renderings of rows that were anchored, canonical and on the canonical microblock stream are cached, and a
// cached one is used only for a key whose principal index row the listing read just now as canonical and on
// the canonical microblock stream: the flags the rendering shows are then the flags the row has. Unconfirmed
// microblock rows (index_block_hash '') are never cached: they give way to the confirming block's rows.

/**
 * ~2 KB of JSON per tx: ~32 MB with what holds it (ENTRY_BYTES), less when the process's bound of all caches
 * (src/caches.ts) takes from the largest. A rendering is counted by its JSON text's length (one byte a
 * character: the JSON of a tx is ASCII but for the UTF-8 text of a few Clarity values) and its key.
 */
const MAX_ENTRIES = 10_000;

const FILE = 'src/api/cache/rendered-txs.ts';

const MINED_TX_RENDERINGS: CacheDeclaration = {
  name: 'renderings: account listings',
  layer: 'renderings',
  key: 'a mined row: tx id, index block hash, microblock hash',
  invalidatedBy: 'nothing (a row never changes; one is used only when read as visible)',
  bound: `${MAX_ENTRIES.toLocaleString('en')} txs, per database`,
  file: FILE,
};

const TX_BY_ID_RENDERINGS: CacheDeclaration = {
  name: 'renderings: tx by id',
  layer: 'renderings',
  key: 'a tx id (its visible row, first page of events)',
  invalidatedBy: 'another row visible for the id (checked by a key read per request)',
  bound: `${MAX_ENTRIES.toLocaleString('en')} txs, per database`,
  file: FILE,
};

/**
 * Row key → rendering, the oldest insertion evicted first.
 * @internal exported for its tests
 */
export class MinedTxRenderings implements CountedCache {
  private readonly entries = new Map<string, RenderedTx>();
  /** tx id → how many of its rows have a cached rendering (one, but for a tx mined on two forks) */
  private readonly rowsOfTx = new Map<string, number>();
  private cachedBytes = 0;
  private readonly oldest = new OldestFirst(this.entries, (key) => {
    this.cachedBytes -= renderingSize(key, this.entries.get(key)!.json);
    this.countRow(key.slice(0, key.indexOf('|')), -1);
  });

  constructor(private readonly maxEntries = MAX_ENTRIES) {
    caches.join(MINED_TX_RENDERINGS, this);
  }

  get bytes(): number {
    return this.cachedBytes;
  }

  evictOldest(): boolean {
    return this.oldest.evict() !== undefined;
  }

  get(key: MinedRowAsRead): RenderedTx | undefined {
    return isCacheable(key) ? this.entries.get(rowKey(key)) : undefined;
  }

  /**
   * Whether a rendering of some row of this tx is cached: a reader that must first learn which row is visible
   * (tx with transfers) reads that row with its key when none is (`AccountTxReaders.rowWithKey`).
   */
  holdsTx(txId: string): boolean {
    return this.rowsOfTx.has(txId);
  }

  /** Caches the rendering of a row read with these flags (ignored unless the row may be cached). */
  set(key: MinedRowAsRead, value: RenderedTx): void {
    if (!isCacheable(key)) return;
    const id = rowKey(key);
    const size = renderingSize(id, value.json);
    if (!caches.makeRoom(size)) return;
    const previous = this.entries.get(id);
    if (previous) {
      this.cachedBytes -= renderingSize(id, previous.json);
    } else {
      if (this.entries.size >= this.maxEntries) this.oldest.evict();
      this.countRow(key.tx_id, 1);
    }
    // (a row rendered again keeps its place)
    this.entries.set(id, value);
    this.cachedBytes += size;
  }

  private countRow(txId: string, change: 1 | -1): void {
    const rows = (this.rowsOfTx.get(txId) ?? 0) + change;
    if (rows > 0) this.rowsOfTx.set(txId, rows);
    else this.rowsOfTx.delete(txId);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** A mined row's key, and the visibility flags it was read with. */
export interface MinedRowAsRead {
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  canonical: boolean;
  microblock_canonical: boolean;
}

const rowKey = (k: MinedRowAsRead) => `${k.tx_id}|${k.index_block_hash}|${k.microblock_hash}`;

/** What a cached rendering retains: its JSON text, its key, and the objects holding them. */
const renderingSize = (key: string, json: string) => json.length + key.length + ENTRY_BYTES;

function isCacheable(k: MinedRowAsRead): boolean {
  return k.index_block_hash !== '' && k.canonical && k.microblock_canonical;
}

/**
 * One cache per database, made on first use (stores wrapping the same database share it; tests open many
 * databases).
 */
function perDatabase<T>(create: () => T): (store: Store) => T {
  const byDatabase = new WeakMap<object, T>();
  return (store) => {
    let cache = byDatabase.get(store.db);
    if (!cache) {
      cache = create();
      byDatabase.set(store.db, cache);
    }
    return cache;
  };
}

export const minedTxRenderings = perDatabase(() => new MinedTxRenderings());

// The same idea for `GET /extended/v1/tx/:tx_id` with its default query (the first page of 20 events,
// function args included): the rendering of the visible row of a tx id, cached with that row's key. A
// request first reads the key of the row visible now (a primary-key lookup, no events, no ABI); only when
// it is the cached one (same block, same microblock: the same immutable row, read as canonical and on the
// canonical microblock stream) is the cached rendering sent, else the row is read and rendered as usual. The
// route's whole answers are also cached (answer-cache.ts), but only while the chain state stays: this cache is
// what a tx asked again after a new block or a mempool change costs (one key read, no render).

/** A cached rendering of a tx id's visible row, with that row's key and status (its ETag). */
export interface TxByIdRendering {
  index_block_hash: string;
  microblock_hash: string;
  status: number;
  json: string;
  /**
   * The single-tx route's ETag of this row, set by that route on its first use of the entry: the tag is a
   * sha256 of the row's key and status, which cannot change while the entry lives (~1.5% of the API's CPU
   * on cached answers, `bench/profile-http.ts --cases 'tx by id'`, when computed per request).
   */
  etag?: string;
}

/**
 * tx id → rendering of its visible row, the oldest insertion evicted first.
 * @internal exported for its tests
 */
export class TxByIdRenderings implements CountedCache {
  private readonly entries = new Map<string, TxByIdRendering>();
  private cachedBytes = 0;
  private readonly oldest = new OldestFirst(this.entries, (txId) => {
    this.cachedBytes -= renderingSize(txId, this.entries.get(txId)!.json);
  });

  constructor(private readonly maxEntries = MAX_ENTRIES) {
    caches.join(TX_BY_ID_RENDERINGS, this);
  }

  get bytes(): number {
    return this.cachedBytes;
  }

  evictOldest(): boolean {
    return this.oldest.evict() !== undefined;
  }

  get(txId: string): TxByIdRendering | undefined {
    return this.entries.get(txId);
  }

  /** Caches the rendering of a row read with these flags (ignored unless the row may be cached). */
  set(row: MinedRowAsRead & { status: number }, json: string): void {
    if (!isCacheable(row)) return;
    const size = renderingSize(row.tx_id, json);
    if (!caches.makeRoom(size)) return;
    const previous = this.entries.get(row.tx_id);
    if (previous) this.cachedBytes -= renderingSize(row.tx_id, previous.json);
    else if (this.entries.size >= this.maxEntries) this.oldest.evict();
    this.cachedBytes += size;
    // (a tx rendered again keeps its place)
    this.entries.set(row.tx_id, {
      index_block_hash: row.index_block_hash,
      microblock_hash: row.microblock_hash,
      status: row.status,
      json,
    });
  }

  get size(): number {
    return this.entries.size;
  }
}

export const txByIdRenderings = perDatabase(() => new TxByIdRenderings());

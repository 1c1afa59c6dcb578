import type { RenderedTx } from '../render/addresses.js';
import type { Store } from '../../store/store.js';
import { cacheMemory, ENTRY_BYTES, type CacheMember } from './cache-memory.js';
import { OldestFirst } from './oldest-first.js';

// The rendered JSON of mined transactions, kept across requests for the account listings
// (transactions_with_transfers), whose pages of 50 txs otherwise read, build and serialize the same
// immutable rows over and over (~50 µs of CPU per tx, most of such a request).
//
// What may be kept: a tx row is identified by (tx_id, index_block_hash, microblock_hash), and everything
// its rendering (without events) shows is fixed once the row is written: the decoded tx, its result and
// costs, its block's hashes and times, and the ABI of the contract it calls (deployed earlier on the same
// fork). Only its visibility flags (`canonical`, `microblock_canonical`) change, on reorgs. So only
// renderings of rows that were anchored, canonical and on the canonical microblock stream are kept, and a
// kept one is used only for a key whose principal index row the listing read just now as canonical and on
// the canonical microblock stream: the flags the rendering shows are then the flags the row has. Unconfirmed
// microblock rows (index_block_hash '') are never kept: they give way to the confirming block's rows.

/** What a listing needs of a kept tx: its JSON text and the fields its transfer totals use. */
export type MinedTxJson = RenderedTx;

/**
 * ~2 KB of JSON per tx: ~32 MB with what holds it (ENTRY_BYTES), less when the process's bound of all caches
 * (cache-memory.ts) takes from the largest. A rendering is counted by its JSON text's length (one byte a
 * character: the JSON of a tx is ASCII but for the UTF-8 text of a few Clarity values) and its key.
 */
const MAX_ENTRIES = 10_000;

/**
 * Row key → rendering, the oldest insertion evicted first.
 * @internal exported for its tests
 */
export class MinedTxJsonCache implements CacheMember {
  private readonly entries = new Map<string, MinedTxJson>();
  /** tx id → how many of its rows have a kept rendering (one, but for a tx mined on two forks) */
  private readonly rowsOfTx = new Map<string, number>();
  private keptBytes = 0;
  private readonly oldest = new OldestFirst(this.entries, (key) => {
    this.keptBytes -= renderingSize(key, this.entries.get(key)!.json);
    this.countRow(key.slice(0, key.indexOf('|')), -1);
  });

  constructor(private readonly maxEntries = MAX_ENTRIES) {
    cacheMemory.join(this);
  }

  get bytes(): number {
    return this.keptBytes;
  }

  evictOldest(): boolean {
    return this.oldest.evict() !== undefined;
  }

  get(key: MinedTxKey): MinedTxJson | undefined {
    return isKeepable(key) ? this.entries.get(rowKey(key)) : undefined;
  }

  /**
   * Whether a rendering of some row of this tx is kept: a reader that must first learn which row is visible
   * (tx with transfers) reads that row with its key when none is (`AccountTxReaders.rowWithKey`).
   */
  holdsTx(txId: string): boolean {
    return this.rowsOfTx.has(txId);
  }

  /** Keeps the rendering of a row read with these flags (ignored unless the row may be kept). */
  set(key: MinedTxKey, value: MinedTxJson): void {
    if (!isKeepable(key)) return;
    const id = rowKey(key);
    const size = renderingSize(id, value.json);
    if (!cacheMemory.makeRoom(size)) return;
    const previous = this.entries.get(id);
    if (previous) {
      this.keptBytes -= renderingSize(id, previous.json);
    } else {
      if (this.entries.size >= this.maxEntries) this.oldest.evict();
      this.countRow(key.tx_id, 1);
    }
    // (a row rendered again keeps its place)
    this.entries.set(id, value);
    this.keptBytes += size;
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

export interface MinedTxKey {
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  canonical: boolean;
  microblock_canonical: boolean;
}

const rowKey = (k: MinedTxKey) => `${k.tx_id}|${k.index_block_hash}|${k.microblock_hash}`;

/** What a kept rendering retains: its JSON text, its key, and the objects holding them. */
const renderingSize = (key: string, json: string) => json.length + key.length + ENTRY_BYTES;

function isKeepable(k: MinedTxKey): boolean {
  return k.index_block_hash !== '' && k.canonical && k.microblock_canonical;
}

/**
 * One cache per database, made on first use (stores wrapping the same database share it; tests open many
 * databases).
 */
function perDatabase<T>(create: () => T): (store: Store) => T {
  const caches = new WeakMap<object, T>();
  return (store) => {
    let cache = caches.get(store.db);
    if (!cache) {
      cache = create();
      caches.set(store.db, cache);
    }
    return cache;
  };
}

export const minedTxJsonCache = perDatabase(() => new MinedTxJsonCache());

// The same idea for `GET /extended/v1/tx/:tx_id` with its default query (the first page of 20 events,
// function args included): the rendering of the visible row of a tx id, kept with that row's key. A
// request first reads the key of the row visible now (a primary-key lookup, no events, no ABI); only when
// it is the kept one (same block, same microblock: the same immutable row, read as canonical and on the
// canonical microblock stream) is the kept rendering sent, else the row is read and rendered as usual. The
// route's whole answers are also kept (kept-answers.ts), but only while the chain state stays: this cache is
// what a tx asked again after a new block or a mempool change costs (one key read, no render).

/** A kept rendering of a tx id's visible row, with that row's key and status (its ETag). */
export interface TxByIdJson {
  index_block_hash: string;
  microblock_hash: string;
  status: number;
  json: string;
  /**
   * The single-tx route's ETag of this row, set by that route on its first use of the entry: the tag is a
   * sha256 of the row's key and status, which cannot change while the entry lives (~1.5% of the API's CPU
   * on kept answers, `bench/profile-http.ts --cases 'tx by id'`, when computed per request).
   */
  etag?: string;
}

/**
 * tx id → rendering of its visible row, the oldest insertion evicted first.
 * @internal exported for its tests
 */
export class TxByIdJsonCache implements CacheMember {
  private readonly entries = new Map<string, TxByIdJson>();
  private keptBytes = 0;
  private readonly oldest = new OldestFirst(this.entries, (txId) => {
    this.keptBytes -= renderingSize(txId, this.entries.get(txId)!.json);
  });

  constructor(private readonly maxEntries = MAX_ENTRIES) {
    cacheMemory.join(this);
  }

  get bytes(): number {
    return this.keptBytes;
  }

  evictOldest(): boolean {
    return this.oldest.evict() !== undefined;
  }

  get(txId: string): TxByIdJson | undefined {
    return this.entries.get(txId);
  }

  /** Keeps the rendering of a row read with these flags (ignored unless the row may be kept). */
  set(row: MinedTxKey & { status: number }, json: string): void {
    if (!isKeepable(row)) return;
    const size = renderingSize(row.tx_id, json);
    if (!cacheMemory.makeRoom(size)) return;
    const previous = this.entries.get(row.tx_id);
    if (previous) this.keptBytes -= renderingSize(row.tx_id, previous.json);
    else if (this.entries.size >= this.maxEntries) this.oldest.evict();
    this.keptBytes += size;
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

export const txByIdJsonCache = perDatabase(() => new TxByIdJsonCache());

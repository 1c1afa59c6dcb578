// Eviction of the oldest entry of a Map or Set bounded by its insertion order (the caches of this folder).
//
// Why not `collection.keys().next()`: a Map or Set keeps deleted entries as holes at their place in its
// insertion-order table until it is rebuilt, and a new iterator starts at the table's first slot, stepping
// over every hole before it. A cache that evicts its oldest entry on each insert (a walk over more ids than it
// holds: the 1M chain's cold tx reads) piles those holes at the front, up to thousands of them, so each eviction
// stepped over thousands: `TxByIdRenderings.set` cost ~7.5 µs a call under eviction against ~0.1 µs with the
// iterator below (40,000 ids through 10,000 entries, `.tmp` micro-benchmark), 1.5% of the API's CPU profile of
// the cold tx by id (`bench/profile-http.ts`; bench finding F-api-eviction-iterator).
//
// One iterator lives as long as the collection instead. The language defines what a live iterator sees: the
// entries not yet visited, in insertion order, deleted ones skipped and ones added later included (a key deleted
// and added again is a new entry at the end). As every key this iterator gives is deleted at once (`evict`),
// the entries it has passed are all gone, so the next one it gives is the oldest entry in the collection.

/** A Map's or Set's keys, oldest first. */
interface InsertionOrdered<K> {
  keys(): Iterator<K>;
  delete(key: K): boolean;
}

export class OldestFirst<K> {
  private iterator: Iterator<K> | undefined;

  /** `onEvict` runs just before a key is deleted (e.g. to count what its entry held). */
  constructor(
    private readonly collection: InsertionOrdered<K>,
    private readonly onEvict?: (key: K) => void,
  ) {}

  /** Deletes the oldest entry of the collection and gives its key; undefined when the collection is empty. */
  evict(): K | undefined {
    let next = this.iterator?.next();
    // An iterator that has reached the end stays done, even for entries added after: start a new one.
    if (next === undefined || next.done) {
      this.iterator = this.collection.keys();
      next = this.iterator.next();
      if (next.done) return undefined;
    }
    this.onEvict?.(next.value);
    this.collection.delete(next.value);
    return next.value;
  }
}

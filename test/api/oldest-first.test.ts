import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AnswerCache } from '../../src/api/cache/answer-cache.js';
import { ENTRY_BYTES } from '../../src/api/cache/entry-bytes.js';
import { OldestFirst } from '../../src/api/cache/oldest-first.js';
import { CacheRegistry } from '../../src/caches.js';
import { TxByIdRenderings } from '../../src/api/cache/rendered-txs.js';

/** The reference: a list of keys in insertion order, a deleted key removed, a key added again moved to the end. */
class ReferenceOrder {
  keys: number[] = [];
  add(key: number, keepsPlace: boolean) {
    if (this.keys.includes(key)) {
      if (keepsPlace) return;
      this.keys.splice(this.keys.indexOf(key), 1);
    }
    this.keys.push(key);
  }
  delete(key: number) {
    const at = this.keys.indexOf(key);
    if (at >= 0) this.keys.splice(at, 1);
  }
}

/** A deterministic pseudo-random sequence (no flaky failures, the same operations on every run). */
function numbers(seed: number) {
  let state = seed;
  return (below: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % below;
  };
}

describe('OldestFirst', () => {
  test('gives the oldest key of a Map or Set through inserts, updates, deletes, re-adds and clears', () => {
    for (const kind of ['map', 'set'] as const) {
      const map = new Map<number, string>();
      const set = new Set<number>();
      const collection = kind === 'map' ? map : set;
      const evicted: number[] = [];
      const oldest = new OldestFirst<number>(collection, (key) => evicted.push(key));
      const reference = new ReferenceOrder();
      const next = numbers(kind === 'map' ? 7 : 11);
      let evictions = 0;
      for (let step = 0; step < 20_000; step++) {
        const op = next(100);
        const key = next(300);
        if (op < 55) {
          // a Map's set of a present key keeps its place; a Set's add of a present key does nothing either
          if (kind === 'map') map.set(key, `v${step}`);
          else set.add(key);
          reference.add(key, true);
        } else if (op < 65) {
          // deleted and added again: now the newest
          collection.delete(key);
          if (kind === 'map') map.set(key, `v${step}`);
          else set.add(key);
          reference.add(key, false);
        } else if (op < 72) {
          collection.delete(key);
          reference.delete(key);
        } else if (op < 73) {
          collection.clear();
          reference.keys = [];
        } else {
          const expected = reference.keys[0];
          assert.equal(oldest.evict(), expected, `${kind}, step ${step}`);
          if (expected !== undefined) {
            evictions++;
            assert.equal(evicted.at(-1), expected, 'onEvict is told the key');
            reference.keys.shift();
          }
        }
        assert.deepEqual([...collection.keys()], reference.keys, `${kind}, step ${step}`);
      }
      assert.ok(evictions > 3_000, `${kind}: ${evictions} evictions`);
      assert.equal(evicted.length, evictions);
    }
  });

  test('an empty collection gives nothing, and entries added after it was emptied are found', () => {
    const set = new Set<string>(['a']);
    const oldest = new OldestFirst(set);
    assert.equal(oldest.evict(), 'a');
    assert.equal(oldest.evict(), undefined);
    set.add('b');
    set.add('c');
    assert.equal(oldest.evict(), 'b');
    assert.deepEqual([...set], ['c']);
  });

  test('the caches built on it evict the oldest entry first, over many rounds of eviction', () => {
    const cache = new TxByIdRenderings(100);
    const id = (n: number) => `0x${String(n).padStart(64, '0')}`;
    for (let n = 0; n < 1_000; n++) {
      cache.set(
        {
          tx_id: id(n),
          index_block_hash: '0xaa',
          microblock_hash: '',
          canonical: true,
          microblock_canonical: true,
          status: 1,
        },
        `{"n":${n}}`,
      );
      if (n % 7 === 0) {
        // a kept tx rendered again keeps its place
        cache.set(
          {
            tx_id: id(Math.max(0, n - 50)),
            index_block_hash: '0xaa',
            microblock_hash: '',
            canonical: true,
            microblock_canonical: true,
            status: 1,
          },
          `{"again":${n}}`,
        );
      }
    }
    assert.equal(cache.size, 100);
    assert.equal(cache.get(id(899)), undefined);
    assert.equal(cache.get(id(900))?.json, '{"n":900}');
    assert.equal(cache.get(id(902))?.json, '{"again":952}');
    assert.equal(cache.get(id(999))?.json, '{"n":999}');

    // cached answers: the bound in bytes, the oldest leaving first, what each held uncounted as it leaves
    // each entry is 90 + its key (3 bytes: /90 to /99) + its tag (1) + ENTRY_BYTES: the 10 newest fit
    const entry = 94 + ENTRY_BYTES;
    const answers = new AnswerCache({
      name: 'test answers',
      file: 'test',
      maxBytes: 10 * entry,
      registry: new CacheRegistry(1e9),
    });
    answers.get('g', '/x'); // the generation
    for (let n = 0; n < 500; n++) answers.set('g', `/${n % 200}`, { body: 'x'.repeat(90), etag: 't' });
    assert.equal(answers.size, 10);
    assert.equal(answers.get('g', '/89'), undefined);
    for (let n = 90; n < 100; n++) assert.ok(answers.get('g', `/${n}`), `/${n} cached`);
    assert.equal(answers.bytes, 10 * entry);
  });

  test('answers asked once are remembered up to their bound, the oldest forgotten first', () => {
    // 2 * 4096 / 1024 = 8 keys asked once are remembered
    const answers = new AnswerCache({
      name: 'test answers',
      file: 'test',
      maxBytes: 4096,
      cacheOnSecondAsk: true,
      typicalAnswerBytes: 1024,
      registry: new CacheRegistry(1e9),
    });
    answers.get('g', '/x');
    for (let round = 0; round < 50; round++) {
      for (let n = 0; n < 9; n++) assert.equal(answers.admits('g', `/${round}/${n}`), false);
      // the first of the 9 was forgotten (asked once again: not admitted), the 9th is remembered
      assert.equal(answers.admits('g', `/${round}/8`), true);
      assert.equal(answers.admits('g', `/${round}/0`), false);
    }
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  MinedTxRenderings,
  TxByIdRenderings,
  type MinedRowAsRead,
} from '../../src/api/cache/rendered-txs.js';

const key = (n: number, over: Partial<MinedRowAsRead> = {}): MinedRowAsRead => ({
  tx_id: `0x${String(n).padStart(64, '0')}`,
  index_block_hash: '0xaa',
  microblock_hash: '',
  canonical: true,
  microblock_canonical: true,
  ...over,
});
const json = (n: number) => ({ json: `{"n":${n}}`, sender_address: 'SP1', fee_rate: String(n) });

describe('the rendered mined tx cache', () => {
  test('caches anchored canonical rows, and gives them only for keys read as visible', () => {
    const cache = new MinedTxRenderings(10);
    cache.set(key(1), json(1));
    assert.deepEqual(cache.get(key(1)), json(1));
    // the same row listed as orphaned, or off the canonical microblock stream: not answered from the cache
    assert.equal(cache.get(key(1, { canonical: false })), undefined);
    assert.equal(cache.get(key(1, { microblock_canonical: false })), undefined);
    // another row of the same tx (mined again in another block): a different entry
    assert.equal(cache.get(key(1, { index_block_hash: '0xbb' })), undefined);
    assert.equal(cache.get(key(1, { microblock_hash: '0xcc' })), undefined);
  });

  test('never caches orphaned, non-canonical-microblock or unconfirmed rows', () => {
    const cache = new MinedTxRenderings(10);
    cache.set(key(1, { canonical: false }), json(1));
    cache.set(key(2, { microblock_canonical: false }), json(2));
    cache.set(key(3, { index_block_hash: '', microblock_hash: '0xcc' }), json(3));
    assert.equal(cache.size, 0);
    assert.equal(cache.get(key(1)), undefined);
    assert.equal(cache.get(key(2)), undefined);
    assert.equal(cache.get(key(3, { index_block_hash: '', microblock_hash: '0xcc' })), undefined);
  });

  test('holds at most its size, the oldest entry leaving first', () => {
    const cache = new MinedTxRenderings(3);
    for (const n of [1, 2, 3, 4]) cache.set(key(n), json(n));
    assert.equal(cache.size, 3);
    assert.equal(cache.get(key(1)), undefined);
    assert.deepEqual(cache.get(key(2)), json(2));
    assert.deepEqual(cache.get(key(4)), json(4));
  });

  test('holdsTx: whether a rendering of some row of the tx is cached, through evictions and forks', () => {
    const cache = new MinedTxRenderings(3);
    assert.equal(cache.holdsTx(key(1).tx_id), false);
    cache.set(key(1), json(1));
    cache.set(key(1, { index_block_hash: '0xbb' }), json(1)); // the same tx mined on another fork
    cache.set(key(1), json(1)); // cached again: still one entry
    cache.set(key(2, { canonical: false }), json(2)); // not cached
    assert.equal(cache.size, 2);
    assert.equal(cache.holdsTx(key(1).tx_id), true);
    assert.equal(cache.holdsTx(key(2).tx_id), false);
    cache.set(key(3), json(3));
    cache.set(key(4), json(4)); // evicts the first row of tx 1: its other row is still cached
    assert.equal(cache.holdsTx(key(1).tx_id), true);
    cache.set(key(5), json(5)); // evicts its second row
    assert.equal(cache.holdsTx(key(1).tx_id), false);
    assert.deepEqual(
      [3, 4, 5].map((n) => cache.holdsTx(key(n).tx_id)),
      [true, true, true],
    );
  });
});

describe('the tx-by-id rendering cache', () => {
  test('caches the rendering of an anchored canonical row with its key and status, bounded', () => {
    const cache = new TxByIdRenderings(2);
    cache.set({ ...key(1), status: 1 }, '{"n":1}');
    assert.deepEqual(cache.get(key(1).tx_id), {
      index_block_hash: '0xaa',
      microblock_hash: '',
      status: 1,
      json: '{"n":1}',
    });
    cache.set({ ...key(2, { canonical: false }), status: 1 }, '{"n":2}');
    cache.set({ ...key(3, { index_block_hash: '', microblock_hash: '0xcc' }), status: 1 }, '{"n":3}');
    assert.equal(cache.size, 1);
    // the same tx mined again elsewhere replaces its entry
    cache.set({ ...key(1, { index_block_hash: '0xbb' }), status: -1 }, '{"n":10}');
    assert.equal(cache.get(key(1).tx_id)?.index_block_hash, '0xbb');
    assert.equal(cache.size, 1);
    cache.set({ ...key(4), status: 1 }, '{"n":4}');
    cache.set({ ...key(5), status: 1 }, '{"n":5}');
    assert.equal(cache.size, 2);
    assert.equal(cache.get(key(1).tx_id), undefined);
    assert.equal(cache.get(key(5).tx_id)?.json, '{"n":5}');
  });
});

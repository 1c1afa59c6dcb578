import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import Fastify from 'fastify';
import { holds, jsonAnswer, notModified } from '../../src/api/answers/answer.js';
import { AnswerCache, type AnswerCacheOptions } from '../../src/api/cache/answer-cache.js';
import { ENTRY_BYTES } from '../../src/api/cache/entry-bytes.js';
import { answerFromCache, send } from '../../src/api/routes/send.js';
import { CacheRegistry } from '../../src/caches.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { freshApiServer, startTestApi } from '../support/api.js';
import { addressOf, ev, transferTx } from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';

after(stopOwnCluster);

const ALICE = addressOf('alice');
const BOB = addressOf('bob');
const DAVE = addressOf('dave');

/** An answer cache of these tests, counted against `registry` (its own bound unless given). */
const answerCache = (options: Omit<AnswerCacheOptions, 'name' | 'file'> = {}) =>
  new AnswerCache({ name: 'test answers', file: 'test', registry: new CacheRegistry(1e9), ...options });

describe('answers cached by their ETag', () => {
  test('found only under the tag they were made with; a new tag drops all; bounded in bytes', () => {
    // each entry counts its body, its key, its own tag and mempool version when it has them, and ENTRY_BYTES for
    // the objects holding them; a small body is cached as text (answer-cache.ts)
    const entry = (bytes: number) => bytes + ENTRY_BYTES;
    const cached = answerCache({ maxBytes: 5 * entry(20) });
    const answer = (text: string) => ({ body: Buffer.from(text) });
    assert.equal(cached.get('t1', '/a'), undefined);
    cached.set('t1', '/a', answer('a'.repeat(18)));
    cached.set('t1', '/b', answer('b'.repeat(18)));
    assert.equal(cached.get('t1', '/a')?.body, 'a'.repeat(18));
    assert.equal(cached.bytes, 2 * entry(20));
    // made under a tag that is no longer current: not cached
    cached.set('t0', '/c', answer('c'));
    assert.equal(cached.size, 2);
    // more than a quarter of the bound: never cached
    cached.set('t1', '/big', answer('x'.repeat(entry(0) / 4 + 100)));
    assert.equal(cached.get('t1', '/big'), undefined);
    // the oldest leave first once the bound is reached: 5 entries of 20 bytes fit, a 6th evicts /a
    for (const k of ['/c', '/d', '/e', '/f']) cached.set('t1', k, answer('z'.repeat(18)));
    assert.equal(cached.bytes, 5 * entry(20));
    assert.equal(cached.get('t1', '/a'), undefined);
    assert.equal(cached.get('t1', '/b')?.body.length, 18);
    assert.equal(cached.size, 5);
    // replacing an entry counts only the new one; a tag and a mempool version count too
    cached.set('t1', '/f', { body: Buffer.from('ff'), etag: 'e'.repeat(10), mempool: '17' });
    assert.equal(cached.bytes, 4 * entry(20) + entry(2 + 2 + 10 + 2));
    assert.deepEqual(cached.get('t1', '/f'), { body: 'ff', etag: 'e'.repeat(10), mempool: '17' });
    // another tag (a new block, a reorg, a mempool change): nothing of the previous tag is answered
    assert.equal(cached.get('t2', '/b'), undefined);
    assert.equal(cached.size, 0);
    assert.equal(cached.bytes, 0);
    assert.equal(cached.get('t1', '/b'), undefined, 'the old tag does not bring them back');
  });

  test('cached bodies retain what they count: small ones as text, large ones in a store of their own', () => {
    const cached = answerCache();
    cached.get('t1', '/');
    // a small Buffer is a slice of an 8 KB pool slab: cached as text, it pins no slab
    const small = Buffer.from('{"a":1}');
    assert.ok(small.buffer.byteLength > small.length, 'a pooled slice');
    cached.set('t1', '/small', { body: small });
    assert.equal(cached.get('t1', '/small')?.body, '{"a":1}');
    // a large slice of a larger store is copied into a store of its own size
    const store = Buffer.alloc(64 * 1024, 'x');
    cached.set('t1', '/large', { body: store.subarray(0, 20_000) });
    const large = cached.get('t1', '/large')!.body as Buffer;
    assert.equal(large.length, 20_000);
    assert.equal(large.buffer.byteLength, 20_000);
    assert.equal(cached.bytes, entry7('/small') + 20_000 + '/large'.length + ENTRY_BYTES);
    function entry7(key: string) {
      return 7 + key.length + ENTRY_BYTES;
    }
  });

  test("the process's bound: all caches together, the one holding the most gives back its oldest first", () => {
    const memory = new CacheRegistry(10 * ENTRY_BYTES + 1000);
    const a = answerCache({ registry: memory });
    const b = answerCache({ registry: memory });
    a.get('g', '/');
    b.get('g', '/');
    const body = (n: number) => ({ body: 'x'.repeat(n) });
    // a holds 6 entries, b 3: 9 of the 10 the bound allows
    for (let i = 0; i < 6; i++) a.set('g', `/${i}`, body(1));
    for (let i = 0; i < 3; i++) b.set('g', `/${i}`, body(1));
    assert.equal(memory.bytes, a.bytes + b.bytes);
    assert.ok(memory.bytes <= memory.bound);
    // two more in b: over the bound, a (the largest) gives back its oldest
    b.set('g', '/3', body(1));
    b.set('g', '/4', body(1));
    assert.ok(memory.bytes <= memory.bound, `${memory.bytes} <= ${memory.bound}`);
    assert.equal(b.size, 5);
    assert.equal(a.get('g', '/0'), undefined, "a's oldest left");
    assert.equal(a.get('g', '/5')?.body, 'x');
    // an entry larger than the whole bound is not cached, and evicts nothing
    const before = memory.bytes;
    const huge = answerCache({ registry: memory, maxBytes: 1e9 });
    huge.get('g', '/');
    huge.set('g', '/huge', body(20 * ENTRY_BYTES));
    assert.equal(huge.size, 0);
    assert.equal(memory.bytes, before);
    // a bound of 0 (CACHE_MAX_MB=0, as the bench's rendered cases serve) keeps nothing: every answer is made anew
    assert.equal(loadConfig({ CACHE_MAX_MB: '0' }).CACHE_MAX_MB, 0);
    assert.throws(() => loadConfig({ CACHE_MAX_MB: '-1' }), ConfigError);
    const none = new CacheRegistry(0);
    const unkept = answerCache({ registry: none });
    unkept.get('g', '/');
    unkept.set('g', '/a', body(1));
    assert.equal(unkept.get('g', '/a'), undefined);
    assert.equal(unkept.size, 0);
    assert.equal(none.bytes, 0);
  });

  test('cacheOnSecondAsk: cached on the second ask of a key under a generation; a long walk caches nothing', () => {
    // 8 KB of bound, 8 KB typical answers: the keys asked once are the latest 2 (2 * maxBytes / typical)
    const cached = answerCache({ maxBytes: 8192, cacheOnSecondAsk: true, typicalAnswerBytes: 8192 });
    const answer = { body: 'x', etag: 'e' };
    assert.equal(cached.get('g1', '/a'), undefined);
    assert.equal(cached.admits('g0', '/a'), false, 'not under an old generation');
    assert.equal(cached.admits('g1', '/a'), false, 'first ask');
    assert.equal(cached.admits('g1', '/a'), true, 'second ask');
    cached.set('g1', '/a', answer);
    assert.deepEqual(cached.get('g1', '/a'), answer);
    // a walk over more keys than are remembered: none is ever admitted, /a stays
    for (let round = 0; round < 2; round += 1) {
      for (const key of ['/w1', '/w2', '/w3']) assert.equal(cached.admits('g1', key), false, key);
    }
    assert.deepEqual(cached.get('g1', '/a'), answer);
    // asked again soon enough: admitted
    assert.equal(cached.admits('g1', '/w3'), true);
    // a new generation forgets the keys asked once (/w2 was one of them)
    assert.equal(cached.get('g2', '/a'), undefined);
    assert.equal(cached.admits('g2', '/w2'), false);
    // without the option, every answer is admitted
    const eager = answerCache({ maxBytes: 8192 });
    eager.get('g1', '/a');
    assert.equal(eager.admits('g1', '/a'), true);
  });

  test('an answer that shows the mempool is cached only by a cache that declares it, and per mempool version', async () => {
    let mempool = 'm1';
    const state = { read: async () => ({ generation: 'g1', mempool }), invalidatedBy: 'test' };
    // a cache whose row (docs/caching.md) says the mempool plays no part refuses such an answer
    const silent = answerCache({ state });
    await assert.rejects(
      silent.made(async () => jsonAnswer('{"pending":1}', 't1', true)),
      /test answers: an answer shows the mempool, and the cache does not declare it/,
    );
    const declared = answerCache({ state, showsMempool: 'some answers' });
    // the route's hook looks first, as for every request
    assert.equal(await declared.lookup('/pending'), undefined, 'nothing cached yet');
    const answer = await declared.made(async () => jsonAnswer('{"pending":1}', 't1', true));
    assert.equal(answer.status, 200);
    assert.ok(answer.status === 200 && answer.cacheable, 'made under a state that stayed: cacheable');
    declared.add('/pending', answer, answer.cacheable.state);
    assert.deepEqual(await declared.lookup('/pending'), { body: '{"pending":1}', etag: 't1', mempool: 'm1' });
    mempool = 'm2';
    assert.equal(await declared.lookup('/pending'), undefined, 'another mempool version');
  });

  test('a cached answer is served before validation, only for a URL whose answer was cached; 304 and 400 as before', async () => {
    // A real Fastify route with a validated query, counting what runs: a cached answer's URL skips validation
    // (the schema's pattern and the preValidation hook) and the handler; any other URL goes through both.
    let tag = 't1';
    const ran = { preValidation: 0, handler: 0 };
    const app = Fastify();
    // answers made under the state `tag`: /tagged is tagged by that state, /own by what its handler read
    const state = { read: async () => ({ generation: tag, mempool: 'm1' }), invalidatedBy: 'a new tag' };
    const byTag = answerCache({ state });
    const byOwnTag = answerCache({ state });
    const schema = {
      querystring: { type: 'object', properties: { id: { type: 'string', pattern: '^[a-z]+$' } } },
    };
    const preValidation = async () => {
      ran.preValidation += 1;
    };
    const body = (request: { query: unknown }) =>
      JSON.stringify({ id: (request.query as { id: string }).id, handler: ran.handler });
    app.get(
      '/tagged',
      { schema, preValidation, onRequest: answerFromCache(byTag) },
      async (request, reply) => {
        const answer = await byTag.made(async () => {
          if (holds(request, tag)) return notModified(tag);
          ran.handler += 1;
          return jsonAnswer(body(request), tag);
        });
        return send(request, reply, answer);
      },
    );
    app.get(
      '/own',
      { schema, preValidation, onRequest: answerFromCache(byOwnTag) },
      async (request, reply) => {
        // the tag of what the handler read
        const answer = await byOwnTag.made(async () => {
          ran.handler += 1;
          return jsonAnswer(body(request), `own-${tag}`);
        });
        return send(request, reply, answer);
      },
    );
    try {
      for (const route of ['/tagged', '/own']) {
        const etag = route === '/own' ? '"own-t1"' : '"t1"';
        const count = () => ({ ...ran });
        const fresh = await app.inject({ url: `${route}?id=abc` });
        assert.equal(fresh.statusCode, 200, route);
        const afterFresh = count();
        const cached = await app.inject({ url: `${route}?id=abc` });
        assert.deepEqual(
          count(),
          afterFresh,
          `${route}: a cached answer runs neither validation nor the handler`,
        );
        assert.equal(cached.body, fresh.body);
        assert.equal(cached.headers.etag, etag);
        assert.equal(cached.headers.etag, fresh.headers.etag);
        assert.equal(cached.headers['content-type'], 'application/json; charset=utf-8');
        assert.equal(cached.headers['cache-control'], fresh.headers['cache-control']);
        // the client holds it: 304 from the cached entry, still without validation
        const notModified = await app.inject({ url: `${route}?id=abc`, headers: { 'if-none-match': etag } });
        assert.equal(notModified.statusCode, 304);
        assert.equal(notModified.body, '');
        assert.deepEqual(count(), afterFresh);
        // an invalid URL is validated, whatever the client holds: the schema's 400, never a 304
        for (const headers of [{}, { 'if-none-match': etag }]) {
          const bad = await app.inject({ url: `${route}?id=ABC`, headers });
          assert.equal(bad.statusCode, 400, route);
          assert.equal(bad.json().message, 'querystring/id must match pattern "^[a-z]+$"');
        }
        assert.equal(ran.preValidation, afterFresh.preValidation + 2);
        assert.equal(ran.handler, afterFresh.handler);
        // another valid URL, and a HEAD of the cached one, are made fresh
        assert.equal((await app.inject({ url: `${route}?id=xyz` })).json().id, 'xyz');
        assert.equal((await app.inject({ method: 'HEAD', url: `${route}?id=abc` })).statusCode, 200);
        assert.equal(ran.handler, afterFresh.handler + 2);
      }
      // a new tag: nothing cached under the old one is served, before validation or after
      tag = 't2';
      const before = ran.handler;
      for (const route of ['/tagged', '/own']) {
        const res = await app.inject({
          url: `${route}?id=abc`,
          headers: { 'if-none-match': '"t1", "own-t1"' },
        });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers.etag, route === '/own' ? '"own-t2"' : '"t2"');
      }
      assert.equal(ran.handler, before + 2);
    } finally {
      await app.close();
    }
  });

  test('a cached page equals a fresh one byte for byte, and a new block or a reorg is never answered from the previous tip', async () => {
    const { store, chain, app, close } = await startTestApi({ engine: 'postgres' });
    const fresh = await freshApiServer(store);
    try {
      const toBob = await transferTx({ from: 'alice', fee: 10, nonce: 0, to: BOB, amount: 500 });
      const b1 = await chain.block({ txs: [{ tx: toBob, events: [ev.stxTransfer(ALICE, BOB, 500)] }] });
      const a2 = await chain.block({
        parent: b1,
        txs: [
          {
            tx: await transferTx({ from: 'alice', fee: 10, nonce: 1, to: BOB, amount: 7 }),
            events: [ev.stxTransfer(ALICE, BOB, 7)],
          },
        ],
      });
      const urls = [
        `/extended/v1/address/${BOB}/transactions_with_transfers?limit=50`,
        `/extended/v1/address/${BOB}/transactions_with_transfers?limit=1&offset=1`,
        `/extended/v1/address/${BOB}/balances`,
      ];
      const get = async (url: string) => {
        const res = await app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 200, url);
        return res;
      };
      // one tx with transfers: rendered from its row first (no request rendered it yet), then from the cached
      // rendering of the tx, the same bytes
      const oneTx = `/extended/v1/address/${BOB}/${toBob.txid}/with_transfers`;
      const rendered = await get(oneTx);
      assert.equal(rendered.json().stx_received, '500');
      assert.equal(rendered.json().tx.block_hash, b1.block_hash);
      assert.equal((await get(oneTx)).body, rendered.body);
      assert.equal((await fresh.inject({ method: 'GET', url: oneTx })).body, rendered.body);

      for (const url of urls) {
        const first = await get(url);
        const cached = await get(url);
        const other = await fresh.inject({ method: 'GET', url });
        assert.equal(cached.body, first.body, url);
        assert.equal(cached.body, other.body, `${url}: cached = fresh`);
        assert.equal(cached.headers.etag, first.headers.etag);
        assert.equal(cached.headers['content-type'], 'application/json; charset=utf-8');
        assert.equal(cached.headers['cache-control'], 'public, no-cache, must-revalidate');
      }
      // cached, not re-read: a change behind the API's back (no new chain state) shows only on the fresh server
      await store.sql`UPDATE stx_balances SET total_received = total_received + 1000 WHERE principal = ${BOB}`;
      assert.equal((await get(urls[2])).json().stx.balance, '507', 'the cached answer');
      const unkept = `${urls[2]}?unanchored=false`; // a URL neither server has answered yet
      assert.equal((await fresh.inject({ method: 'GET', url: unkept })).json().stx.balance, '1507');
      await store.sql`UPDATE stx_balances SET total_received = total_received - 1000 WHERE principal = ${BOB}`;
      assert.equal((await get(urls[0])).json().total, 2);
      assert.equal((await get(urls[2])).json().stx.balance, '507');
      // a 304 still comes before the cached body
      const tag = (await get(urls[0])).headers.etag as string;
      const notModified = await app.inject({
        method: 'GET',
        url: urls[0],
        headers: { 'if-none-match': tag },
      });
      assert.equal(notModified.statusCode, 304);
      assert.equal(notModified.body, '');

      // a new block: the pages and the balance show it at once
      const a3 = await chain.block({
        parent: a2,
        txs: [
          {
            tx: await transferTx({ from: 'alice', fee: 10, nonce: 2, to: BOB, amount: 1 }),
            events: [ev.stxTransfer(ALICE, BOB, 1)],
          },
        ],
      });
      const afterBlock = await get(urls[0]);
      assert.notEqual(afterBlock.headers.etag, tag);
      assert.equal(afterBlock.json().total, 3);
      assert.equal(afterBlock.json().results[0].tx.block_hash, a3.block_hash);
      assert.equal((await get(urls[2])).json().stx.balance, '508');
      assert.equal((await get(urls[0])).body, (await fresh.inject({ method: 'GET', url: urls[0] })).body);

      // a fork from block 1 wins at height 4: bob's txs of blocks 2 and 3 are gone, dave's appear
      const b2 = await chain.block({
        parent: b1,
        txs: [
          {
            tx: await transferTx({ from: 'alice', fee: 20, nonce: 1, to: DAVE, amount: 700 }),
            events: [ev.stxTransfer(ALICE, DAVE, 700)],
          },
        ],
      });
      const b3 = await chain.block({ parent: b2 });
      assert.equal((await get(urls[0])).json().total, 3, 'the fork is not canonical yet');
      await chain.block({ parent: b3 });
      const afterReorg = await get(urls[0]);
      assert.equal(afterReorg.json().total, 1);
      assert.equal(afterReorg.json().results[0].tx.block_hash, b1.block_hash);
      assert.equal((await get(urls[1])).json().results.length, 0);
      assert.equal((await get(urls[2])).json().stx.balance, '500');
      for (const url of urls) {
        assert.equal((await get(url)).body, (await fresh.inject({ method: 'GET', url })).body, url);
      }
    } finally {
      await fresh.close();
      await close();
    }
  });

  test('mempool stats and fees are cached per snapshot: a new block ages them at once, a new tx shows at once', async () => {
    const { chain, app, close } = await startTestApi({ engine: 'postgres' });
    try {
      await chain.block();
      await chain.mempool([await transferTx({ from: 'alice', fee: 300, nonce: 0, to: BOB, amount: 1 })]);
      const stats = '/extended/v1/tx/mempool/stats';
      const fees = '/extended/v2/mempool/fees';
      const before = await app.inject({ method: 'GET', url: stats });
      assert.deepEqual(before.json().tx_ages.token_transfer, { p25: 1, p50: 1, p75: 1, p95: 1 });
      const cached = await app.inject({ method: 'GET', url: stats });
      assert.equal(cached.body, before.body);
      assert.equal(cached.headers.etag, before.headers.etag);
      assert.equal((await app.inject({ method: 'GET', url: fees })).json().all.medium_priority, 300);

      // A block that mines nothing of the mempool still moves the ages.
      await chain.block();
      const after = await app.inject({ method: 'GET', url: stats });
      assert.deepEqual(after.json().tx_ages.token_transfer, { p25: 2, p50: 2, p75: 2, p95: 2 });
      assert.equal((await app.inject({ method: 'GET', url: stats })).body, after.body);

      // A new pending tx: a new tag, and both answers show it.
      await chain.mempool([await transferTx({ from: 'bob', fee: 500, nonce: 0, to: ALICE, amount: 1 })]);
      const third = await app.inject({ method: 'GET', url: stats });
      assert.notEqual(third.headers.etag, after.headers.etag);
      assert.equal(third.json().tx_type_counts.token_transfer, 2);
      assert.equal((await app.inject({ method: 'GET', url: fees })).json().all.high_priority, 490); // p95 of 300 and 500
    } finally {
      await close();
    }
  });

  test('balances are cached per mempool version: a pending tx shows at once', async () => {
    const { chain, app, close } = await startTestApi({ engine: 'postgres' });
    try {
      await chain.block({
        txs: [
          {
            tx: await transferTx({ from: 'alice', fee: 10, nonce: 0, to: BOB, amount: 500 }),
            events: [ev.stxTransfer(ALICE, BOB, 500)],
          },
        ],
      });
      const url = `/extended/v1/address/${BOB}/balances`;
      const before = await app.inject({ method: 'GET', url });
      assert.equal(before.json().stx.pending_balance_inbound, '0');
      assert.equal((await app.inject({ method: 'GET', url })).body, before.body);
      await chain.mempool([await transferTx({ from: 'alice', fee: 10, nonce: 1, to: BOB, amount: 42 })]);
      const after = await app.inject({ method: 'GET', url });
      assert.notEqual(after.headers.etag, before.headers.etag);
      assert.equal(after.json().stx.pending_balance_inbound, '42');
      assert.equal(after.json().stx.estimated_balance, '542');
    } finally {
      await close();
    }
  });
});

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { freshApiServer, startTestApi } from '../support/api.js';
import { addressOf, ev, transferTx, transferWithEvent } from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';

// `GET /extended/v1/address/:principal/:tx_id/with_transfers` caches its answers by the chain tag (tip and
// microblock), from their second ask (src/api/routes/addresses.ts). A change made behind the API's back (an
// event's amount, no new chain state) tells a cached answer from a fresh read.

after(stopOwnCluster);

const ALICE = addressOf('alice');
const BOB = addressOf('bob');

describe('tx with transfers cached by its ETag', () => {
  test('cached from its second ask (same bytes, same ETag); a new block drops it; a reorg that orphans the tx answers 404', async () => {
    const { store, chain, app, close } = await startTestApi({ engine: 'postgres' });
    const fresh = await freshApiServer(store);
    try {
      const transfer = (nonce: number, amount: number) =>
        transferTx({ from: 'alice', fee: 10, nonce, to: BOB, amount });
      const early = await transfer(0, 5);
      const b1 = await chain.block({ txs: [{ tx: early, events: [ev.stxTransfer(ALICE, BOB, 5)] }] });
      const toBob = await transfer(1, 500);
      const a2 = await chain.block({
        parent: b1,
        txs: [{ tx: toBob, events: [ev.stxTransfer(ALICE, BOB, 500)] }],
      });
      const url = `/extended/v1/address/${BOB}/${toBob.txid}/with_transfers`;
      const earlyUrl = `/extended/v1/address/${BOB}/${early.txid}/with_transfers`;
      const ask = async (path: string, headers: Record<string, string> = {}) => {
        const res = await app.inject({ method: 'GET', url: path, headers });
        return { status: res.statusCode, etag: res.headers.etag, body: res.body, res };
      };
      const received = async (path: string) => {
        const res = await ask(path);
        assert.equal(res.status, 200, path);
        return (JSON.parse(res.body) as { stx_received: string }).stx_received;
      };
      // an amount changed behind the API's back: only a read shows it
      const bump = (amount: number) =>
        store.sql`UPDATE events SET amount = amount + ${amount} WHERE tx_id = ${toBob.txid}`;

      const first = await ask(url);
      assert.equal(first.status, 200);
      assert.equal(first.etag, `"${a2.index_block_hash}:0x"`, 'the tip and (no) microblock');
      assert.equal(JSON.parse(first.body).stx_received, '500');
      assert.equal(JSON.parse(first.body).tx.block_hash, a2.block_hash);
      await bump(1000);
      assert.equal(await received(url), '1500', 'asked once: not cached, the second ask reads');
      await bump(-1000);
      const third = await ask(url);
      assert.equal(JSON.parse(third.body).stx_received, '1500', 'the second answer is cached');
      assert.equal(third.etag, first.etag);
      assert.equal(third.res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(third.res.headers['cache-control'], 'public, no-cache, must-revalidate');
      const truth = await fresh.inject({ method: 'GET', url });
      assert.equal(JSON.parse(truth.body).stx_received, '500', 'the database holds 500 again');
      assert.equal(truth.body, first.body, 'a fresh read gives the first answer, byte for byte');

      // an answer cached with nothing changed behind its back is the fresh one, byte for byte and tag
      await ask(earlyUrl);
      await ask(earlyUrl);
      const keptEarly = await ask(earlyUrl);
      const freshEarly = await fresh.inject({ method: 'GET', url: earlyUrl });
      assert.equal(keptEarly.body, freshEarly.body);
      assert.equal(keptEarly.etag, freshEarly.headers.etag);
      assert.equal(JSON.parse(keptEarly.body).stx_received, '5');

      // a 304 still comes before the cached body
      const notModified = await ask(url, { 'if-none-match': first.etag as string });
      assert.equal(notModified.status, 304);
      assert.equal(notModified.body, '');

      // a new block: a new tag, and the cached answer is gone (the change behind the API's back now shows)
      await bump(1000);
      const a3 = await chain.block({
        parent: a2,
        txs: [{ tx: await transfer(2, 7), events: [ev.stxTransfer(ALICE, BOB, 7)] }],
      });
      const afterBlock = await ask(url);
      assert.equal(afterBlock.etag, `"${a3.index_block_hash}:0x"`);
      assert.equal(JSON.parse(afterBlock.body).stx_received, '1500', 'read again under the new tip');
      await bump(-1000);
      assert.equal(await received(url), '500', 'its second ask under the new tip reads, and is cached');
      assert.equal(await received(url), '500');

      // a fork from block 1 wins at height 4: toBob (block 2) is orphaned, the early tx stays canonical
      const f2 = await chain.block({ parent: b1 });
      const f3 = await chain.block({ parent: f2 });
      assert.equal(await received(url), '500', 'the fork is not canonical yet');
      const f4 = await chain.block({ parent: f3 });
      const orphaned = await ask(url);
      assert.equal(orphaned.status, 404, 'orphaned by the reorg, not the cached answer');
      assert.equal(JSON.parse(orphaned.body).message, 'No matching transaction found');
      assert.equal(orphaned.etag, undefined);
      assert.equal((await ask(url)).status, 404, 'a 404 is not cached either');
      for (let i = 0; i < 3; i += 1) {
        const stays = await ask(earlyUrl);
        assert.equal(stays.status, 200);
        assert.equal(stays.etag, `"${f4.index_block_hash}:0x"`);
        assert.equal(stays.body, (await fresh.inject({ method: 'GET', url: earlyUrl })).body);
      }
    } finally {
      await fresh.close();
      await close();
    }
  });

  test('a tx of an unconfirmed microblock: cached under the stream, gone when a fork of the stream replaces it, then as confirmed', async () => {
    const { store, chain, app, close } = await startTestApi({ engine: 'postgres' });
    const fresh = await freshApiServer(store);
    try {
      const parent = await chain.block({});
      const streamed = await transferWithEvent({ from: 'alice', to: BOB, amount: 300, fee: 10, nonce: 0 });
      const other = await transferWithEvent({ from: 'carol', to: BOB, amount: 9, fee: 10, nonce: 0 });
      const url = `/extended/v1/address/${BOB}/${streamed.tx.txid}/with_transfers`;
      // asked three times (the third from memory): the same bytes and tag as a fresh server's
      const keptIsFresh = async (status = 200) => {
        const answers = [];
        for (let i = 0; i < 3; i += 1) answers.push(await app.inject({ method: 'GET', url }));
        const now = await fresh.inject({ method: 'GET', url });
        for (const answer of answers) {
          assert.equal(answer.statusCode, status);
          assert.equal(answer.body, now.body);
          assert.equal(answer.headers.etag, now.headers.etag);
        }
        return answers[2];
      };
      await keptIsFresh(404);
      const m1 = await chain.microblock({ parent, txs: [streamed] });
      const inStream = await keptIsFresh();
      assert.equal(inStream.headers.etag, `"${parent.index_block_hash}:${m1.hash}"`);
      assert.equal(inStream.json().tx.microblock_hash, m1.hash);
      assert.equal(inStream.json().tx.is_unanchored, true);
      assert.equal(inStream.json().stx_received, '300');
      // a fork of the stream replaces m1 (same sequence): the tx is no longer visible
      const m1b = await chain.microblock({ parent, txs: [other] });
      await keptIsFresh(404);
      const m2 = await chain.microblock({ parent, previous: m1b, txs: [streamed] });
      assert.equal((await keptIsFresh()).json().tx.microblock_hash, m2.hash);
      const confirming = await chain.block({ parent, confirms: [m1b, m2] });
      const confirmed = await keptIsFresh();
      assert.equal(confirmed.json().tx.block_hash, confirming.block_hash);
      assert.equal(confirmed.json().tx.is_unanchored, false);
      assert.equal(confirmed.headers.etag, `"${confirming.index_block_hash}:0x"`);
    } finally {
      await fresh.close();
      await close();
    }
  });

  test('a walk over more txs than are remembered caches and evicts nothing; a tx asked twice is cached', async () => {
    const { store, chain, app, close } = await startTestApi({ engine: 'postgres' });
    try {
      const toBob = await transferTx({ from: 'alice', fee: 10, nonce: 0, to: BOB, amount: 500 });
      await chain.block({ txs: [{ tx: toBob, events: [ev.stxTransfer(ALICE, BOB, 500)] }] });
      const url = `/extended/v1/address/${BOB}/${toBob.txid}/with_transfers`;
      const received = async (path: string) => {
        const res = await app.inject({ method: 'GET', url: path });
        assert.equal(res.statusCode, 200, path);
        return (res.json() as { stx_received: string }).stx_received;
      };
      const bump = (amount: number) =>
        store.sql`UPDATE events SET amount = amount + ${amount} WHERE tx_id = ${toBob.txid}`;
      // asked twice: cached
      await received(url);
      assert.equal(await received(url), '500');
      // a walk: each URL once (the query string makes each its own key), more than the route remembers (2 × 8 MB
      // of ~2.6 KB answers: 6,452), in groups that arrive together as a crawler's would
      const WALK = 6_600;
      const walk = (i: number) => `${url}?walk=${i}`;
      for (let i = 0; i < WALK; i += 100) {
        const group = Array.from({ length: Math.min(100, WALK - i) }, (_, j) => received(walk(i + j)));
        for (const answer of await Promise.all(group)) assert.equal(answer, '500');
      }
      await bump(1000);
      assert.equal(await received(url), '500', 'asked twice before the walk: still cached');
      assert.equal(await received(walk(0)), '1500', 'asked once long ago: not cached, read');
      const last = walk(WALK - 1);
      assert.equal(await received(last), '1500', 'its second ask is read');
      await bump(-1000);
      assert.equal(await received(last), '1500', 'and cached');
    } finally {
      await close();
    }
  });
});

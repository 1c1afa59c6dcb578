import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { freshApiServer, startTestApi } from '../support/api.js';
import { addressOf, deployTx, ev, transferTx } from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';

after(stopOwnCluster);

const ALICE = addressOf('alice');
const BOB = addressOf('bob');

describe('block and contract-status answers cached by their ETag', () => {
  test('a cached block equals a fresh one byte for byte; a new block or a reorg is never answered from the previous tip', async () => {
    const { store, chain, app, close } = await startTestApi({ engine: 'postgres' });
    const fresh = await freshApiServer(store);
    try {
      const transfer = (nonce: number, amount: number) =>
        transferTx({ from: 'alice', fee: 10, nonce, to: BOB, amount });
      const b1 = await chain.block({
        txs: [{ tx: await transfer(0, 5), events: [ev.stxTransfer(ALICE, BOB, 5)] }],
      });
      const a2 = await chain.block({
        parent: b1,
        txs: [{ tx: await transfer(1, 6), events: [ev.stxTransfer(ALICE, BOB, 6)] }],
      });
      const byBurn2 = `/extended/v1/block/by_burn_block_height/${a2.burn_block_height}`;
      const contract = `${ALICE}.cached`;
      const status = `/extended/v2/smart-contracts/status?contract_id=${contract}&contract_id=${ALICE}.none`;
      const urls = [
        byBurn2,
        '/extended/v2/blocks/2',
        '/extended/v2/blocks/latest',
        '/extended/v2/blocks/1',
        status,
      ];
      const get = async (url: string) => {
        const res = await app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 200, url);
        return res;
      };
      const sameAsFresh = async (url: string) => {
        const cached = await get(url);
        const other = await fresh.inject({ method: 'GET', url });
        assert.equal(cached.body, other.body, `${url}: cached = fresh`);
        assert.equal(cached.headers.etag, other.headers.etag, url);
        return cached;
      };
      for (const url of urls) {
        const first = await get(url);
        const cached = await get(url);
        assert.equal(cached.body, first.body, url);
        assert.equal(cached.headers.etag, first.headers.etag);
        assert.equal(cached.headers['content-type'], 'application/json; charset=utf-8');
        assert.equal(cached.headers['cache-control'], 'public, no-cache, must-revalidate');
        await sameAsFresh(url);
      }
      assert.equal((await get(byBurn2)).json().hash, a2.block_hash);
      assert.equal((await get(byBurn2)).json().txs.length, 1);
      assert.equal((await get('/extended/v2/blocks/latest')).json().hash, a2.block_hash);

      // cached, not re-read: a change behind the API's back (no new chain state) shows only on the fresh server
      await store.sql`UPDATE blocks SET block_time = block_time + 1000 WHERE index_block_hash = ${a2.index_block_hash}`;
      const keptTime = (await get('/extended/v2/blocks/2')).json().block_time;
      const freshTime = (await fresh.inject({ method: 'GET', url: '/extended/v2/blocks/2?x=1' })).json()
        .block_time;
      assert.equal(freshTime, keptTime + 1000, 'the cached answer is sent, not a fresh read');
      await store.sql`UPDATE blocks SET block_time = block_time - 1000 WHERE index_block_hash = ${a2.index_block_hash}`;

      // one height's tag does not drop another's: both still cached under the same tip
      const tag2 = (await get('/extended/v2/blocks/2')).headers.etag as string;
      const tag1 = (await get('/extended/v2/blocks/1')).headers.etag as string;
      assert.notEqual(tag1, tag2);
      const notModified = await app.inject({
        method: 'GET',
        url: '/extended/v2/blocks/2',
        headers: { 'if-none-match': tag2 },
      });
      assert.equal(notModified.statusCode, 304, 'a 304 still comes before the cached body');
      assert.equal(notModified.body, '');

      // a deploy reaches the mempool: the tip tag stays, the cached status does not
      assert.deepEqual((await get(status)).json()[contract], { found: false });
      const deploy = await deployTx({
        from: 'alice',
        name: 'cached',
        nonce: 3,
        fee: 10,
        code: '(define-read-only (n) u1)',
      });
      await chain.mempool([deploy]);
      const pending = await sameAsFresh(status);
      assert.equal(pending.json()[contract].result.status, 'pending');
      assert.equal(
        pending.headers.etag,
        (await get('/extended/v2/blocks/latest')).headers.etag?.toString().replace(':latest', ''),
      );

      // a new block: latest and the tag change at once
      const a3 = await chain.block({
        parent: a2,
        txs: [{ tx: await transfer(2, 7), events: [ev.stxTransfer(ALICE, BOB, 7)] }],
      });
      const latest = await get('/extended/v2/blocks/latest');
      assert.equal(latest.json().hash, a3.block_hash);
      assert.notEqual((await get('/extended/v2/blocks/2')).headers.etag, tag2);
      for (const url of urls) await sameAsFresh(url);

      // a fork from block 1 wins at height 4: burn height 102 and height 2 now name the fork's block
      const f2 = await chain.block({ parent: b1 });
      const f3 = await chain.block({ parent: f2 });
      assert.equal((await get(byBurn2)).json().hash, a2.block_hash, 'the fork is not canonical yet');
      const f4 = await chain.block({ parent: f3 });
      const reorged = await get(byBurn2);
      assert.equal(reorged.json().hash, f2.block_hash);
      assert.deepEqual(reorged.json().txs, []);
      assert.equal((await get('/extended/v2/blocks/2')).json().hash, f2.block_hash);
      assert.equal((await get('/extended/v2/blocks/latest')).json().hash, f4.block_hash);
      for (const url of urls) await sameAsFresh(url);
    } finally {
      await fresh.close();
      await close();
    }
  });

  test('a block named by its hash or index hash is cached from its second ask, and dropped with the tip (a reorg)', async () => {
    const { store, chain, app, close } = await startTestApi({ engine: 'postgres' });
    try {
      const b1 = await chain.block({});
      const a2 = await chain.block({ parent: b1 });
      const ask = async (url: string) => {
        const res = await app.inject({ method: 'GET', url });
        return {
          status: res.statusCode,
          etag: res.headers.etag,
          body: res.json() as Record<string, unknown>,
        };
      };
      const bump = (seconds: number) =>
        store.sql`UPDATE blocks SET block_time = block_time + ${seconds} WHERE index_block_hash = ${a2.index_block_hash}`;
      const byHash = `/extended/v2/blocks/${a2.block_hash}`;
      const byIndexHash = `/extended/v2/blocks/${a2.index_block_hash}`;
      const tip = a2.index_block_hash;
      for (const [url, hash] of [
        [byHash, a2.block_hash],
        [byIndexHash, a2.index_block_hash],
      ]) {
        const first = await ask(url);
        assert.equal(first.status, 200, url);
        assert.equal(first.etag, `"${tip}:${hash}"`, url);
        assert.equal(first.body.canonical, true);
        // asked once: not cached, a change behind the API's back shows on the second ask, which is cached
        await bump(1000);
        const second = await ask(url);
        assert.equal(
          second.body.block_time,
          (first.body.block_time as number) + 1000,
          `${url}: second ask read`,
        );
        await bump(-1000);
        const third = await ask(url);
        assert.equal(third.body.block_time, second.body.block_time, `${url}: third ask answered from memory`);
        assert.equal(third.etag, first.etag);
      }

      // a fork from block 1 overtakes: a2 is no longer canonical, and its cached answers go with the old tip
      const f2 = await chain.block({ parent: b1 });
      assert.equal(
        (await ask(`/extended/v2/blocks/${f2.block_hash}`)).status,
        404,
        'the fork is not canonical yet',
      );
      assert.equal((await ask(byHash)).body.block_time, (await ask(byIndexHash)).body.block_time);
      await chain.block({ parent: f2 });
      for (const url of [byHash, byIndexHash]) {
        const gone = await ask(url);
        assert.equal(gone.status, 404, `${url}: orphaned by the reorg`);
        assert.equal(gone.body.message, 'Block not found');
      }
      const fork = await ask(`/extended/v2/blocks/${f2.index_block_hash}`);
      assert.equal(fork.status, 200);
      assert.equal(fork.body.hash, f2.block_hash);
      assert.equal(fork.body.canonical, true);
    } finally {
      await close();
    }
  });

  test('a walk over more heights than the bound holds caches and evicts nothing; a height asked twice is cached', async () => {
    const { store, chain, app, close } = await startTestApi({ engine: 'postgres' });
    try {
      const b1 = await chain.block({});
      const b2 = await chain.block({ parent: b1 });
      const byBurn = `/extended/v1/block/by_burn_block_height/${b2.burn_block_height}`;
      const blockTime = async (url: string) => {
        const res = await app.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 200, url);
        return (res.json() as { block_time: number }).block_time;
      };
      // asked twice: cached (the second answer is the one cached)
      const hot = ['/extended/v2/blocks/2', byBurn];
      const before = new Map<string, number>();
      for (const url of hot) {
        await blockTime(url);
        before.set(url, await blockTime(url));
      }
      // a walk: each URL once (the query string makes each its own key), more than either route remembers
      const walk = (i: number) => [`/extended/v2/blocks/2?walk=${i}`, `${byBurn}?walk=${i}`];
      for (let i = 0; i < 2500; i += 1) for (const url of walk(i)) await blockTime(url);
      // behind the API's back (no new chain state): a cached answer still shows the old time, a fresh read the new
      await store.sql`UPDATE blocks SET block_time = block_time + 1000 WHERE index_block_hash = ${b2.index_block_hash}`;
      for (const url of hot)
        assert.equal(await blockTime(url), before.get(url), `${url}: still cached after the walk`);
      for (const url of walk(0)) {
        assert.equal(
          await blockTime(url),
          before.get(url.split('?')[0])! + 1000,
          `${url}: asked once long ago, not cached`,
        );
      }
      for (const url of walk(2499)) {
        assert.equal(
          await blockTime(url),
          before.get(url.split('?')[0])! + 1000,
          `${url}: its second ask is read`,
        );
        assert.equal(await blockTime(url), before.get(url.split('?')[0])! + 1000, `${url}: and cached`);
      }
      await store.sql`UPDATE blocks SET block_time = block_time - 1000 WHERE index_block_hash = ${b2.index_block_hash}`;
      for (const url of walk(2499)) {
        assert.equal(
          await blockTime(url),
          before.get(url.split('?')[0])! + 1000,
          `${url}: answered from memory`,
        );
      }
    } finally {
      await close();
    }
  });
});

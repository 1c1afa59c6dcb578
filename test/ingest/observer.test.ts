import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { buildObserverServer } from '../../src/ingest/observer-server.js';
import { readTsv } from '../../src/protocol/tsv.js';
import type { Store } from '../../src/store/store.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { READ_TABLES, databaseDigest } from '../support/digest.js';
import { fixtureFile } from '../support/shared.js';

after(stopOwnCluster);

async function recordedMessages(fixture: string) {
  const messages = [];
  for await (const m of readTsv(fixtureFile(fixture))) messages.push(m);
  return messages;
}

function observer(store: Store, beforeCommit?: () => void) {
  const ingestor = new Ingestor(store, { isMainnet: false, logger: silentLogger, beforeCommit });
  return buildObserverServer({ ingestor, logger: silentLogger, bodyLimitBytes: 50 * 1024 * 1024 });
}

for (const engine of testEngines(import.meta.url)) {
  describe(`event observer (${engine})`, () => {
    test('answers its status on GET /', async () => {
      const store = await openTestStore(engine);
      const app = observer(store);
      try {
        const res = await app.inject({ method: 'GET', url: '/' });
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().status, 'ready');
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('a malformed payload gets 400 and writes nothing', async () => {
      const store = await openTestStore(engine);
      const app = observer(store);
      try {
        const empty = await databaseDigest(store.sql);
        const bad = [
          { url: '/new_block', payload: '{"block_hash": ', expect: /not valid JSON/ },
          { url: '/new_block', payload: '{"block_hash": "0x01"}', expect: /invalid payload/ },
          { url: '/new_burn_block', payload: '{"burn_block_height": "x"}', expect: /invalid payload/ },
          { url: '/new_mempool_tx', payload: '["0xzz"]', expect: /invalid payload/ },
          { url: '/new_microblocks', payload: '[]', expect: /invalid payload/ },
        ];
        for (const b of bad) {
          const res = await app.inject({
            method: 'POST',
            url: b.url,
            payload: b.payload,
            headers: { 'content-type': 'application/json' },
          });
          assert.equal(res.statusCode, 400, `${b.url} ${b.payload}`);
          assert.equal(res.json().error, 'Bad Request');
          assert.match(res.json().message, b.expect);
        }
        const unknown = await app.inject({ method: 'POST', url: '/new_thing', payload: '{}' });
        assert.equal(unknown.statusCode, 404);
        assert.deepEqual(await databaseDigest(store.sql), empty);
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('what a node may send beyond what this index knows is taken: 200, logged, nothing invented', async () => {
      const store = await openTestStore(engine);
      const app = observer(store);
      const post = (url: string, payload: string) =>
        app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });
      try {
        const messages = await recordedMessages('mocknet');
        for (const m of messages.slice(0, 5)) assert.equal((await post(m.path, m.payload)).statusCode, 200);
        const indexed = await databaseDigest(store.sql, READ_TABLES);

        // A drop reason stacks-core may add later: the txs stay as they are, the message is kept as skipped.
        const drop = await post('/drop_mempool_tx', '{"dropped_txids": [], "reason": "SomeNewReason"}');
        assert.equal(drop.statusCode, 200, drop.body);
        assert.equal(drop.json().outcome, 'skipped');
        // A raw tx the codec cannot read (a format newer than it): left out, the others stored.
        const later = messages.slice(5).find((m) => m.path === '/new_block');
        const readable = (JSON.parse(later!.payload) as { transactions: { raw_tx: string }[] })
          .transactions[0].raw_tx;
        const mempool = await post('/new_mempool_tx', JSON.stringify(['0x0000', readable]));
        assert.equal(mempool.statusCode, 200, mempool.body);
        assert.equal(mempool.json().outcome, 'applied');
        const [{ n }] = await store.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM mempool_txs`;
        assert.equal(n, 1);
        // The miner's own events, sent to an observer subscribed to `mined_blocks` / `mined_microblocks`.
        for (const path of ['/mined_block', '/mined_microblock', '/mined_nakamoto_block']) {
          const res = await post(path, '{"target_burn_height": 1, "block_hash": "0x01"}');
          assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
          assert.equal(res.json().outcome, 'applied');
        }
        const logged = await store.sql<{ path: string; skipped: boolean }[]>`
          SELECT path, skipped FROM observer_messages ORDER BY id DESC LIMIT 5`;
        assert.deepEqual(
          logged.map((r) => `${r.path}${r.skipped ? ' (skipped)' : ''}`),
          [
            '/mined_nakamoto_block',
            '/mined_microblock',
            '/mined_block',
            '/new_mempool_tx',
            '/drop_mempool_tx (skipped)',
          ],
        );
        assert.notDeepEqual(await databaseDigest(store.sql, READ_TABLES), indexed);
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('a burn block announced again: kept as stored, a duplicate whatever it says', async () => {
      const store = await openTestStore(engine);
      const app = observer(store);
      const post = async (payload: object) => {
        const res = await app.inject({
          method: 'POST',
          url: '/new_burn_block',
          payload: JSON.stringify(payload),
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(res.statusCode, 200, res.body);
        return (res.json() as { outcome: string }).outcome;
      };
      const burnBlock = (hash: string, height: number, amt: number) => ({
        burn_block_hash: `0x${hash.repeat(64)}`,
        burn_block_height: height,
        burn_amount: 10,
        reward_recipients: [{ recipient: 'mvtMXL2MVW7dMGBvKVaxDXBJvwWjDtLPCr', amt }],
        reward_slot_holders: ['mvtMXL2MVW7dMGBvKVaxDXBJvwWjDtLPCr'],
      });
      const rows = async () => [
        ...(await store.sql<{ hash: string; canonical: boolean; amt: string }[]>`
          SELECT left(burn_block_hash, 4) AS hash, canonical, reward_recipients->0->>'amt' AS amt
          FROM burn_blocks ORDER BY burn_block_height, burn_block_hash`),
      ];
      try {
        assert.equal(await post(burnBlock('a', 100, 5)), 'applied');
        // the same block, its keys in another order: the message's text differs, what it says does not
        const { reward_slot_holders, ...rest } = burnBlock('a', 100, 5);
        assert.equal(await post({ reward_slot_holders, ...rest }), 'duplicate');
        assert.equal(await post(burnBlock('a', 100, 6)), 'reannounced');
        assert.deepEqual(await rows(), [{ hash: '0xaa', canonical: true, amt: '5' }]);
        // a burnchain fork replaces it
        assert.equal(await post(burnBlock('b', 100, 7)), 'applied');
        assert.deepEqual(await rows(), [
          { hash: '0xaa', canonical: false, amt: '5' },
          { hash: '0xbb', canonical: true, amt: '7' },
        ]);
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('re-sending a block answers 200 and changes nothing', async () => {
      const store = await openTestStore(engine);
      const app = observer(store);
      try {
        const messages = await recordedMessages('mocknet');
        for (const m of messages.slice(0, 5)) {
          const res = await app.inject({ method: 'POST', url: m.path, payload: m.payload });
          assert.equal(res.statusCode, 200);
          assert.equal(res.json().outcome, 'applied');
        }
        const before = await databaseDigest(store.sql);
        const again = await app.inject({
          method: 'POST',
          url: messages[4].path,
          payload: messages[4].payload,
        });
        assert.equal(again.statusCode, 200);
        assert.equal(again.json().outcome, 'duplicate');
        assert.deepEqual(await databaseDigest(store.sql), before);
        const [tip] = await store.sql<{ block_height: number }[]>`SELECT block_height FROM chain_tip`;
        assert.equal(tip.block_height, 5);
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('a message failing half-way leaves the database as it was, and can be re-sent', async () => {
      const store = await openTestStore(engine);
      let failNext = false;
      const app = observer(store, () => {
        if (failNext) throw new Error('injected failure after the inserts');
      });
      try {
        const messages = await recordedMessages('mainnet-reorg-scenario2');
        const [firstBlock, ...rest] = messages;
        assert.equal(
          (await app.inject({ method: 'POST', url: firstBlock.path, payload: firstBlock.payload }))
            .statusCode,
          200,
        );
        const before = await databaseDigest(store.sql);

        // Fail the microblocks message and then the next block, both after all their rows were written.
        for (const m of rest.slice(0, 2)) {
          failNext = true;
          const failed = await app.inject({ method: 'POST', url: m.path, payload: m.payload });
          assert.equal(failed.statusCode, 500);
          assert.match(failed.json().message, /injected failure/);
          assert.deepEqual(await databaseDigest(store.sql), before, `${m.path} left rows behind`);
        }

        failNext = false;
        for (const m of rest) {
          const res = await app.inject({ method: 'POST', url: m.path, payload: m.payload });
          assert.equal(res.statusCode, 200);
          assert.equal(res.json().outcome, 'applied');
        }
        const [tip] = await store.sql<{ block_height: number; block_hash: string }[]>`
          SELECT block_height, block_hash FROM chain_tip`;
        assert.equal(tip.block_height, 4);
        assert.ok(tip.block_hash.startsWith('0x5d0618b4b1f1d445'));
      } finally {
        await app.close();
        await store.close();
      }
    });
  });
}

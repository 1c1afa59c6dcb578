import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { buildObserverServer } from '../../src/ingest/observer-server.js';
import { readTsv } from '../../src/protocol/tsv.js';
import type { Store } from '../../src/store/store.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { databaseDigest } from '../support/digest.js';
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
          { url: '/new_mempool_tx', payload: '["0x0000"]', expect: /cannot be decoded/ },
          {
            url: '/drop_mempool_tx',
            payload: '{"dropped_txids": [], "reason": "Whatever"}',
            expect: /unknown drop reason/,
          },
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

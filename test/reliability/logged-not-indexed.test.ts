import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { MessageConflictError } from '../../src/errors.js';
import { migrate } from '../../src/store/migrate.js';
import { Store } from '../../src/store/store.js';
import { beginLoggedMessage } from '../../src/store/write/message-log.js';
import {
  connectTestDatabase,
  createTestDatabaseUrl,
  silentLogger,
  stopOwnCluster,
} from '../support/database.js';
import { assertSameIndex, uninterruptedRun } from '../support/digest.js';
import { freePort } from '../support/postgres.js';
import { deliverAll } from '../support/sender.js';
import { startServe } from '../support/serve-process.js';
import { fixtureMessages } from '../support/shared.js';

// A database left by a lost connection in a version that could commit a message's raw-log row without the
// message: a burn block and the block after it logged, not indexed. The node's re-send of the block was then a
// duplicate and every later block was refused (409, its parent not indexed) for good. `serve` now finds such
// messages at start-up and applies them from the log; the chain goes on, and the index equals a clean ingest
// of the messages in the order they took effect.

after(stopOwnCluster);

const CHAIN = 'generated/gen-small';

describe('messages logged as delivered but not indexed (postgres)', () => {
  test('serve applies them from the log at start-up: the chain goes on, the index as if applied then', async () => {
    const messages = fixtureMessages(CHAIN).slice(0, 120);
    // a burn block, its block, then a mempool message, from the middle of the chain
    const k = messages.findIndex(
      (m, i) =>
        i > messages.length / 3 &&
        m.path === '/new_burn_block' &&
        messages[i + 1].path === '/new_block' &&
        messages[i + 2].path === '/new_mempool_tx',
    );
    assert.ok(k > 0);
    const next = messages.findIndex((m, i) => i > k + 2 && m.path === '/new_block');
    // What the index must hold: the two messages applied when the check finds them, after those the node
    // sent meanwhile (its mempool and burn blocks); the log keeps them where they were delivered.
    const applied = uninterruptedRun([
      ...messages.slice(0, k),
      ...messages.slice(k + 2, next),
      ...messages.slice(k, k + 2),
      ...messages.slice(next),
    ]);
    const delivered = uninterruptedRun(messages);
    const reference = Promise.all([applied, delivered]).then(([{ digest }, { log }]) => ({ digest, log }));
    reference.catch(() => {});
    const databaseUrl = await createTestDatabaseUrl();
    const store = new Store(await connectTestDatabase(databaseUrl));
    try {
      await migrate(store.sql);
      const ingestor = new Ingestor(store, { isMainnet: true, logger: silentLogger });
      for (const m of messages.slice(0, k)) await ingestor.take(m.path, m.payload, m.receivedAt);
      // what the lost connection left: the two log rows committed, their rows not
      for (const m of messages.slice(k, k + 2)) {
        const logged = ingestor.prepare(m.path, m.payload, m.receivedAt);
        await store.transaction((sql) => beginLoggedMessage(sql, store.engine, logged));
      }
      assert.equal(
        await ingestor.take(messages[k + 2].path, messages[k + 2].payload, messages[k + 2].receivedAt),
        'applied',
      );
      // the damage as the node met it: its re-send a duplicate, the next block refused
      assert.equal(await ingestor.take(messages[k + 1].path, messages[k + 1].payload), 'duplicate');
      for (const m of messages.slice(k + 3, next)) await ingestor.take(m.path, m.payload, m.receivedAt);
      await assert.rejects(ingestor.take(messages[next].path, messages[next].payload), MessageConflictError);
    } finally {
      await store.close();
    }

    const observerPort = await freePort();
    const service = await startServe({ databaseUrl, apiPort: await freePort(), observerPort });
    try {
      // every later message taken at once (each waits for the check, which runs before the first)
      const send = await deliverAll(messages.slice(next), { url: () => `http://127.0.0.1:${observerPort}` });
      assert.deepEqual(send.failures, {});
      const repaired = service.logs.filter(
        (l) => l.msg === 'a message logged as delivered was not indexed: applied it from the log',
      );
      assert.deepEqual(
        repaired.map((l) => l.path),
        ['/new_burn_block', '/new_block'],
      );
    } finally {
      await service.kill('SIGTERM');
    }
    await assertSameIndex({ url: databaseUrl }, reference);
  });
});

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createTestDatabaseUrl, stopOwnCluster } from '../support/database.js';
import { freePort } from '../support/postgres.js';
import { deliverAll } from '../support/sender.js';
import { sleep, startServe } from '../support/serve-process.js';
import { fixtureMessages } from '../support/shared.js';

// Ingest stuck: a node re-sending a block whose parent the index never got (409, again and again) is a chain
// that no longer moves, whatever the database says. /ready then answers 503 once messages have waited past
// INGEST_STALL_SECONDS without one taken, and 200 again as soon as one is.

after(stopOwnCluster);

const CHAIN = 'generated/gen-small';

interface ReadyBody {
  status: string;
  observer?: { waiting_seconds: number; stalled: boolean };
}

async function ready(apiPort: number): Promise<{ status: number; body: ReadyBody }> {
  const res = await fetch(`http://127.0.0.1:${apiPort}/ready`);
  return { status: res.status, body: (await res.json()) as ReadyBody };
}

describe('readiness while ingest is stuck (postgres)', () => {
  test('a block refused again and again: /ready 503 past INGEST_STALL_SECONDS, 200 once the chain moves', async () => {
    const messages = fixtureMessages(CHAIN);
    const blocks = messages.flatMap((m, i) => (m.path === '/new_block' ? [i] : []));
    const [missing, child] = [blocks[5], blocks[6]];
    const apiPort = await freePort();
    const observerPort = await freePort();
    const observer = `http://127.0.0.1:${observerPort}`;
    const service = await startServe({
      databaseUrl: await createTestDatabaseUrl(),
      apiPort,
      observerPort,
      env: { INGEST_STALL_SECONDS: '1' },
    });
    try {
      await deliverAll(messages.slice(0, missing), { url: () => observer });
      const before = await ready(apiPort);
      assert.equal(before.status, 200);
      assert.deepEqual(before.body.observer, { waiting_seconds: 0, stalled: false });

      // The node lost a block and keeps re-sending the next one, as it does until it gets a 200.
      const post = () =>
        fetch(`${observer}${messages[child].path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: messages[child].payload,
        }).then((res) => res.status);
      const statuses = new Set<number>();
      for (const started = performance.now(); performance.now() - started < 2_500; await sleep(200)) {
        statuses.add(await post());
      }
      assert.deepEqual([...statuses], [409]);
      const stuck = await ready(apiPort);
      assert.equal(stuck.status, 503);
      assert.equal(stuck.body.status, 'not_ready');
      assert.equal(stuck.body.observer?.stalled, true);
      assert.ok(stuck.body.observer.waiting_seconds >= 1, JSON.stringify(stuck.body.observer));

      // The missing block arrives: the chain moves, and so does readiness (its answer is at most 1 s old).
      await deliverAll(messages.slice(missing, child + 1), { url: () => observer });
      await sleep(1_100);
      const moving = await ready(apiPort);
      assert.equal(moving.status, 200);
      assert.deepEqual(moving.body.observer, { waiting_seconds: 0, stalled: false });
    } finally {
      await service.kill('SIGTERM');
    }
  });
});

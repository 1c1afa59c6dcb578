import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey, revokeKey } from '../../src/api/plugins/api-keys.js';
import { openReplicaStore } from '../../src/cli/runtime.js';
import { serve, type RunningService } from '../../src/cli/serve.js';
import { loadConfig } from '../../src/config.js';
import { readTsv } from '../../src/protocol/tsv.js';
import { Store } from '../../src/store/store.js';
import { connectTestDatabase, silentLogger, TEST_CONNECT_TIMEOUT_MS } from '../support/database.js';
import { engines } from '../support/engines.js';
import { baseUrlOf } from '../support/http.js';
import { freePort, startPostgres, startReplica, type TestPostgres } from '../support/postgres.js';
import { serveConfig, TESTNET } from '../support/serve-config.js';
import { fixtureFile } from '../support/shared.js';
import { poll as pollEvery } from '../support/poll.js';

/** Every 50 ms, for 30 s at most. */
const poll = <T>(what: string, probe: () => Promise<T | undefined>) =>
  pollEvery(what, probe, { timeoutMs: 30_000, everyMs: 50 });

// One writer, one reader on a streaming replica, as docs/deploy.md describes: a PostgreSQL primary and a
// hot standby made from a copy of its data directory (support/postgres.ts), a `serve --write-only` process ingesting into the primary, and a
// `serve --read-only` process reading from the replica. The data shows up on the reader.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const getJson = async (url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
};

const MOCKNET_TIP_HASH = '0x7682af212d3c1ef62613412f9b5a727269b4548f14eca2e3f941f7ad8b3c11b2';

const skip = !engines.includes('postgres') && 'TEST_ENGINES leaves PostgreSQL out';

describe('read replicas (PostgreSQL streaming replication)', { skip }, () => {
  let primary: TestPostgres | undefined;
  let replica: TestPostgres;
  let primaryUrl: string;
  let replicaUrl: string;
  let writer: RunningService | undefined;
  let reader: RunningService | undefined;

  before(async () => {
    const cluster = await startPostgres({ replication: true });
    primary = cluster;
    primaryUrl = await cluster.createDatabase('indexer');
    replica = await startReplica(cluster);
    replicaUrl = primaryUrl.replace(`:${cluster.port}/`, `:${replica.port}/`);
  });

  after(async () => {
    await reader?.stop();
    await writer?.stop();
    await replica?.stop();
    await primary?.stop();
    primary = undefined;
  });

  test('a reader on the replica serves what the writer ingests into the primary', async () => {
    const env = { DATABASE_URL: primaryUrl, ...TESTNET };
    writer = await serve(serveConfig(env), silentLogger, 'write-only');
    // The writer migrated the primary; the reader starts once the whole schema has reached the replica
    // (each migration commits on its own: the replica may hold some and not yet the last).
    const primaryDb = await connectTestDatabase(primaryUrl);
    const [{ n: migrations }] = await primaryDb.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM schema_migrations`;
    await primaryDb.close();
    assert.ok(migrations >= 12, `${migrations} migrations on the primary`);
    const replicaDb = await connectTestDatabase(replicaUrl);
    try {
      const [{ in_recovery }] = await replicaDb.sql`SELECT pg_is_in_recovery() AS in_recovery`;
      assert.equal(in_recovery, true, 'the replica is a hot standby');
      await poll('the schema on the replica', async () => {
        const [row] = await replicaDb.sql`SELECT count(*)::int AS n FROM schema_migrations`;
        return row.n === migrations ? true : undefined;
      });
    } finally {
      await replicaDb.close();
    }
    reader = await serve(
      serveConfig({ ...env, DATABASE_REPLICA_URLS: replicaUrl }),
      silentLogger,
      'read-only',
    );
    assert.equal(reader.observer, undefined);
    const api = baseUrlOf(reader.api!);
    const observer = baseUrlOf(writer.observer!);
    assert.equal((await getJson(`${api}/extended/v2/blocks/latest`)).status, 404, 'nothing yet');

    const messages: Awaited<ReturnType<typeof collect>> = await collect();

    const send = async (from: number, to: number) => {
      for (const m of messages.slice(from, to)) {
        const res = await fetch(`${observer}${m.path}`, { method: 'POST', body: m.payload });
        assert.equal(res.status, 200, `${m.path} ${m.id}`);
      }
    };

    await send(0, 10);
    const first = await poll('block 10 on the reader', async () => {
      const { status, body } = await getJson(`${api}/extended/v2/blocks/latest`);
      return status === 200 && body.height === 10 ? body : undefined;
    });
    assert.equal(first.canonical, true);

    await send(10, messages.length);
    const status = await poll('the tip and its microblock on the reader', async () => {
      const { body } = await getJson(`${api}/extended`);
      return body.chain_tip?.microblock_sequence === 1 ? body : undefined;
    });
    assert.equal(status.chain_tip.block_height, 28);
    assert.equal(status.chain_tip.block_hash, MOCKNET_TIP_HASH);

    const ready = await poll('the replica caught up', async () => {
      const { status: code, body } = await getJson(`${api}/ready`);
      return code === 200 && body.primary?.blocks_behind === 0 ? body : undefined;
    });
    assert.equal(ready.database.role, 'replica');
    assert.equal(typeof ready.database.replay_lag_seconds, 'number');
    assert.deepEqual(ready.primary, { reachable: true, stacks_tip_height: 28, blocks_behind: 0 });
    assert.equal(ready.ingest.stacks_tip_height, 28);

    // API keys: created on the primary, seen by the reader through replication (no notification reaches a
    // replica: its server re-reads the keys every 2 s), `last used` written back to the primary (a replica
    // cannot take writes); a revocation on the primary reaches the reader within the same bound.
    const primaryStore = new Store(await connectTestDatabase(primaryUrl));
    const keyed = (key: string) => getJson(`${api}/extended/v2/blocks/28`, { 'x-api-key': key });
    try {
      const key = await createApiKey(primaryStore, 'replica test');
      const created = Date.now();
      const served = await poll('the new key served by the reader', async () => {
        const res = await keyed(key.key);
        return res.status === 200 ? res : undefined;
      });
      assert.ok(Date.now() - created < 5_000, `the new key took ${Date.now() - created} ms`);
      assert.equal(served.body.hash, MOCKNET_TIP_HASH);
      await poll('last_used_at on the primary', async () => {
        const [row] = await primaryStore.sql`SELECT last_used_at FROM api_keys WHERE id = ${key.id}`;
        return row.last_used_at ? true : undefined;
      });
      assert.equal(await revokeKey(primaryStore, key.id), 'revoked');
      const revoked = Date.now();
      const refused = await poll('the revoked key refused by the reader', async () => {
        const res = await keyed(key.key);
        return res.status === 403 ? res : undefined;
      });
      assert.ok(Date.now() - revoked < 5_000, `the revocation took ${Date.now() - revoked} ms`);
      assert.equal(refused.body.message, 'The API key in X-API-Key is invalid or revoked');
    } finally {
      await primaryStore.close();
    }

    // Reads do not need the primary: with the writer and the primary gone, the reader still answers.
    await writer.stop();
    writer = undefined;
    await primary!.stop();
    primary = undefined;
    const block = await getJson(`${api}/extended/v2/blocks/28`);
    assert.equal(block.status, 200);
    assert.equal(block.body.hash, MOCKNET_TIP_HASH);
    await sleep(1_050); // /ready answers from a check at most a second old
    const alone = await getJson(`${api}/ready`);
    assert.equal(alone.status, 200);
    assert.deepEqual(alone.body.primary, { reachable: false, stacks_tip_height: null, blocks_behind: null });
  });

  test('a reader skips a replica that does not answer and takes the next', async () => {
    const dead = `postgres://postgres@127.0.0.1:${await freePort()}/indexer`;
    const config = loadConfig({
      DATABASE_URL: primaryUrl,
      DB_CONNECT_TIMEOUT_MS: String(TEST_CONNECT_TIMEOUT_MS),
    });
    const store = await openReplicaStore([dead, replicaUrl], config, silentLogger, 0);
    try {
      const [row] =
        await store.sql`SELECT pg_is_in_recovery() AS in_recovery, current_setting('port') AS port`;
      assert.deepEqual(row, { in_recovery: true, port: String(replica.port) });
    } finally {
      await store.close();
    }
    await assert.rejects(
      openReplicaStore([dead], config, silentLogger, 0),
      /no usable replica in DATABASE_REPLICA_URLS: postgres:\/\/127\.0\.0\.1:\d+\/indexer: /,
    );
  });
});

async function collect() {
  const messages = [];
  for await (const m of readTsv(fixtureFile('mocknet'))) messages.push(m);
  return messages;
}

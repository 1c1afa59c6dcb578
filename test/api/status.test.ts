import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, describe, test } from 'node:test';
import { AccessCounters } from '../../src/metrics.js';
import { Ingestor, type IngestorOptions } from '../../src/ingest/ingestor.js';
import { replayFile } from '../../src/ingest/replay.js';
import { ServiceMetrics, startMetricsServer } from '../../src/metrics.js';
import { openDatabase, type Engine } from '../../src/store/db.js';
import { Store } from '../../src/store/store.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { startTestApi, type TestApiOptions } from '../support/api.js';
import { freePort } from '../support/postgres.js';
import { fixtureFile } from '../support/shared.js';

after(stopOwnCluster);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// mocknet.tsv: 28 blocks, then a microblock on the tip; its last message was received 2021-07-28T22:05:58.964Z.
const MOCKNET_TIP = {
  block_height: 28,
  block_hash: '0x7682af212d3c1ef62613412f9b5a727269b4548f14eca2e3f941f7ad8b3c11b2',
  index_block_hash: '0x76cd67a65c0dfd5ea450bb9efe30da89fa125bfc077c953802f718353283a533',
  microblock_hash: '0xdb05bdc45d4f4fb3a05c83198fea805c683e1c5fbc09f55d95ec7bdb1b398d2d',
  microblock_sequence: 1,
  burn_block_height: 29,
};

async function replayed(engine: Engine, fixture: string, onMessage?: IngestorOptions['onMessage']) {
  const store = await openTestStore(engine);
  const ingestor = new Ingestor(store, { isMainnet: false, logger: silentLogger, onMessage });
  await replayFile(ingestor, fixtureFile(fixture));
  return { store, ingestor };
}

const api = async (store: Store, extra: Omit<TestApiOptions, 'store' | 'engine'> = {}) =>
  (await startTestApi({ store, apiVersion: 'v9.9.9 (test:abc)', ...extra })).app;

/** `name{labels} value` lines of a Prometheus text answer, as a map. */
function samples(text: string): Map<string, number> {
  const map = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const at = line.lastIndexOf(' ');
    map.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return map;
}

for (const engine of testEngines(import.meta.url)) {
  describe(`status, health and readiness (${engine})`, () => {
    test('on an empty database: no chain tip, ready, nothing ingested', async () => {
      const store = await openTestStore(engine);
      const app = await api(store);
      try {
        const status = await app.inject({ url: '/extended' });
        assert.equal(status.statusCode, 200);
        assert.deepEqual(status.json(), {
          server_version: 'stacks-read-api v9.9.9 (test:abc)',
          status: 'ready',
          chain_tip: null,
        });
        const ready = await app.inject({ url: '/ready' });
        assert.equal(ready.statusCode, 200);
        assert.deepEqual(ready.json(), {
          status: 'ready',
          database: { reachable: true, engine, role: 'primary', replay_lag_seconds: null },
          migrations: { applied: true, pending: [] },
          ingest: {
            stacks_tip_height: 0,
            stacks_tip_burn_height: null,
            burn_tip_height: 0,
            lag_blocks: null,
            last_message_at: null,
            seconds_since_last_message: null,
          },
        });
        assert.deepEqual((await app.inject({ url: '/health' })).json(), { status: 'ok' });
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('after a replay: the chain tip with its microblock, the ingest lag and the last message time', async () => {
      const { store, ingestor } = await replayed(engine, 'mocknet');
      const app = await api(store);
      try {
        const status = await app.inject({ url: '/extended' });
        assert.deepEqual(status.json(), {
          server_version: 'stacks-read-api v9.9.9 (test:abc)',
          status: 'ready',
          chain_tip: MOCKNET_TIP,
        });
        const replayedBy = Date.now();
        const ready = (await app.inject({ url: '/ready' })).json();
        assert.equal(ready.status, 'ready');
        // The lag is the time since this indexer received a message (the replay, just now), not since the
        // time the file records (mocknet's last message is from 2021-07-28: 4+ years of "lag").
        assert.ok(ready.ingest.seconds_since_last_message >= 0, 'not negative');
        assert.ok(ready.ingest.seconds_since_last_message < 60, 'the replay just delivered its messages');
        assert.ok(replayedBy - Date.parse(ready.ingest.last_message_at) < 60_000, 'stored just now');
        assert.deepEqual(
          { ...ready.ingest, seconds_since_last_message: 0, last_message_at: '' },
          {
            stacks_tip_height: 28,
            stacks_tip_burn_height: 29,
            burn_tip_height: 29,
            lag_blocks: 0,
            last_message_at: '',
            seconds_since_last_message: 0,
          },
        );

        // Two burn blocks announced past the tip's: the lag is 2 blocks; the message just received is fresh.
        for (const height of [30, 31]) {
          const burn = {
            burn_block_hash: `0x${String(height).padStart(64, '0')}`,
            burn_block_height: height,
            burn_amount: 0,
            reward_recipients: [],
            reward_slot_holders: [],
          };
          assert.equal(await ingestor.take('/new_burn_block', JSON.stringify(burn)), 'applied');
        }
        await sleep(1_050); // /ready answers from a check at most a second old
        const lagging = (await app.inject({ url: '/ready' })).json();
        assert.equal(lagging.status, 'ready', 'lag is reported, not judged');
        assert.equal(lagging.ingest.burn_tip_height, 31);
        assert.equal(lagging.ingest.stacks_tip_burn_height, 29);
        assert.equal(lagging.ingest.lag_blocks, 2);
        assert.ok(lagging.ingest.seconds_since_last_message < 60, 'a message just received');
        assert.ok(Date.now() - Date.parse(lagging.ingest.last_message_at) < 60_000);
        assert.equal((await app.inject({ url: '/extended' })).json().chain_tip.burn_block_height, 31);
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('/ready answers from one check for a second: 50 calls cost the queries of one', async () => {
      const store = await openTestStore(engine);
      let queries = 0;
      const sql = new Proxy(store.db.sql, {
        apply(target, self, args) {
          queries += 1;
          return Reflect.apply(target, self, args);
        },
      });
      const counted = new Store({ ...store.db, sql });
      const app = await api(counted);
      try {
        const first = await app.inject({ url: '/ready' });
        assert.equal(first.statusCode, 200);
        const perCheck = queries;
        assert.ok(perCheck >= 3, `a check queries the database (${perCheck} statements)`);
        const burst = await Promise.all(Array.from({ length: 50 }, () => app.inject({ url: '/ready' })));
        assert.deepEqual(
          burst.map((res) => res.statusCode),
          Array(50).fill(200),
        );
        assert.ok(burst.every((res) => res.body === first.body));
        assert.equal(queries, perCheck);
        await sleep(1_050);
        assert.equal((await app.inject({ url: '/ready' })).statusCode, 200);
        assert.equal(queries, 2 * perCheck);
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('/ready answers 503 while a migration is pending; /health does not care', async () => {
      const store = await openTestStore(engine);
      const app = await api(store);
      try {
        await store.sql`DELETE FROM schema_migrations WHERE version = 4`;
        const ready = await app.inject({ url: '/ready' });
        assert.equal(ready.statusCode, 503);
        assert.equal(ready.json().status, 'not_ready');
        assert.deepEqual(ready.json().migrations, { applied: false, pending: ['004_api_keys'] });
        assert.equal(ready.json().database.reachable, true);
        assert.equal((await app.inject({ url: '/health' })).statusCode, 200);
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('with the database gone: /health 200, /ready and /extended 503', async () => {
      const store = await openTestStore(engine);
      const app = await api(store);
      try {
        await store.close();
        assert.deepEqual((await app.inject({ url: '/health' })).json(), { status: 'ok' });
        const ready = await app.inject({ url: '/ready' });
        assert.equal(ready.statusCode, 503);
        assert.equal(ready.json().status, 'not_ready');
        assert.equal(ready.json().database.reachable, false);
        assert.equal(typeof ready.json().database.error, 'string');
        assert.equal(ready.json().ingest, null);
        const status = await app.inject({ url: '/extended' });
        assert.equal(status.statusCode, 503);
        assert.equal(status.json().message, 'The database service is unavailable');
      } finally {
        await app.close();
      }
    });

    test('metrics: requests per route, ingest timings per path, chain gauges, access rejections', async () => {
      const metrics = new ServiceMetrics({ accessCounters: new AccessCounters() });
      const { store, ingestor } = await replayed(engine, 'fuzzed-transactions-1', (path, outcome, seconds) =>
        metrics.observeIngest(path, outcome, seconds),
      );
      const counters = new AccessCounters();
      const withStore = new ServiceMetrics({ store, accessCounters: counters });
      // The ingest histogram lives in `metrics`; the rest in `withStore`, as one process would have them.
      const app = await api(store, {
        requestMetrics: withStore.requests,
        accessControl: {
          apiKeysRequired: false,
          rateLimitEnabled: true,
          anonymousLimit: 4,
          keyedLimit: 10,
          trustedProxies: [],
          counters,
        },
      });
      const server = await startMetricsServer(withStore, '127.0.0.1', 0);
      try {
        const codes = [];
        for (const url of [
          '/extended/v2/blocks/12',
          '/extended/v2/blocks/12',
          '/extended/v2/blocks/999',
          '/nope',
        ]) {
          codes.push((await app.inject({ url })).statusCode);
        }
        codes.push((await app.inject({ url: '/extended/v2/blocks/12' })).statusCode);
        assert.deepEqual(codes, [200, 200, 404, 404, 429]);
        await assert.rejects(ingestor.take('/new_block', '{"nope": 1}'), /invalid payload/);
        await assert.rejects(ingestor.take('/new_block', '{'), /not valid JSON/);

        const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
        const s = samples(await res.text());
        const block = 'method="GET",route="/extended/v2/blocks/:height_or_hash"';
        assert.equal(s.get(`stacks_api_http_requests_total{${block},status_code="200"}`), 2);
        assert.equal(s.get(`stacks_api_http_requests_total{${block},status_code="404"}`), 1);
        assert.equal(s.get(`stacks_api_http_requests_total{${block},status_code="429"}`), 1);
        assert.equal(
          s.get('stacks_api_http_requests_total{method="GET",route="unmatched",status_code="404"}'),
          1,
        );
        assert.equal(s.get(`stacks_api_http_request_duration_seconds_count{${block},status_code="200"}`), 2);
        assert.equal(
          s.get(`stacks_api_http_request_duration_seconds_bucket{${block},status_code="200",le="+Inf"}`),
          2,
        );
        assert.equal(s.get('stacks_api_chain_tip_height'), 12);
        assert.equal(s.get('stacks_api_burn_tip_height'), 244);
        assert.equal(s.get('stacks_api_ingest_lag_blocks'), 0);
        assert.equal(s.get('stacks_api_mempool_size'), 1);
        assert.equal(s.get('stacks_api_database_up'), 1);
        assert.ok((s.get('stacks_api_seconds_since_last_observer_message') ?? 0) > 0);
        assert.equal(s.get('stacks_api_access_rejected_total{status_code="429"}'), 1);
        assert.equal(s.get('stacks_api_access_rejected_total{status_code="403"}'), 0);
        assert.equal(s.get('stacks_api_access_admitted_total{client="anonymous"}'), 4);
        assert.equal(s.get('stacks_api_rate_limit_store_errors_total'), 0);

        const ingest = samples(await metrics.text());
        const count = (path: string, outcome: string) =>
          ingest.get(`stacks_api_ingest_message_duration_seconds_count{path="${path}",outcome="${outcome}"}`);
        assert.equal(count('/new_block', 'applied'), 13);
        assert.equal(count('/new_burn_block', 'applied'), 4);
        assert.equal(count('/new_mempool_tx', 'applied'), 11);
        assert.equal(count('/drop_mempool_tx', 'applied'), 1);
        assert.equal(count('/new_block', 'invalid'), 2);
        assert.ok(
          (ingest.get(
            'stacks_api_ingest_message_duration_seconds_sum{path="/new_block",outcome="applied"}',
          ) ?? 0) > 0,
        );

        const other = await fetch(`http://127.0.0.1:${server.port}/`);
        assert.equal(other.status, 404);
        await other.text();
      } finally {
        await server.close();
        await app.close();
        await store.close();
      }
    });
  });
}

describe('readiness against a database that does not answer', () => {
  let silent: Server;
  after(() => silent?.close());

  test('/ready gives up after its timeout and answers 503 naming the cause', async () => {
    // Accepts TCP connections and never says a word: a hung database.
    silent = createServer(() => {});
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    const db = await openDatabase({
      url: `postgres://postgres@127.0.0.1:${port}/x`,
      // longer than the readiness timeout: it is /ready that must give up
      connectTimeoutMs: 4_000,
      pgliteDir: '',
      poolMax: 1,
    });
    const store = new Store(db);
    const app = await api(store);
    try {
      const started = Date.now();
      const ready = await app.inject({ url: '/ready' });
      const took = Date.now() - started;
      assert.equal(ready.statusCode, 503);
      assert.deepEqual(ready.json(), {
        status: 'not_ready',
        database: {
          reachable: false,
          engine: 'postgres',
          role: null,
          replay_lag_seconds: null,
          error: 'the database did not answer within 2000 ms',
        },
        migrations: { applied: false, pending: [] },
        ingest: null,
      });
      assert.ok(took >= 1900 && took < 8000, `took ${took} ms`);
    } finally {
      await app.close();
      await db.sql.end({ timeout: 0 });
    }
  });
});

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { Redis } from 'ioredis';
import pino from 'pino';
import { AccessCounters } from '../../src/metrics.js';
import {
  EXEMPT_ROUTE_PATHS,
  accessControlFromConfig,
  parseTrustedProxies,
  type AccessControlOptions,
} from '../../src/api/plugins/access-control.js';
import { createApiKey, revokeKey } from '../../src/api/plugins/api-keys.js';
import { runKeysCommand } from '../../src/cli/keys.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { buildObserverServer } from '../../src/ingest/observer-server.js';
import { replayFile } from '../../src/ingest/replay.js';
import { migrate } from '../../src/store/migrate.js';
import { Store } from '../../src/store/store.js';
import { startTestApi } from '../support/api.js';
import {
  connectTestDatabase,
  createTestDatabaseUrl,
  openTestStore,
  silentLogger,
  stopOwnCluster,
} from '../support/database.js';
import type { Engine } from '../../src/store/db.js';
import { engines, testEngines } from '../support/engines.js';
import { listenLocal } from '../support/http.js';
import { redisSkipReason, startRedis, type TestRedis } from '../support/redis.js';
import { fixtureFile } from '../support/shared.js';

after(stopOwnCluster);

/** A route that reads the database and answers 200 once the fixture is in. */
const URL_OK = '/extended/v2/blocks/latest';
const TIP_HEIGHT = 12;

async function storeWithChain(engine: Engine): Promise<Store> {
  const store = await openTestStore(engine);
  await replayFile(
    new Ingestor(store, { isMainnet: false, logger: silentLogger }),
    fixtureFile('fuzzed-transactions-1'),
  );
  return store;
}

const BASE: AccessControlOptions = {
  apiKeysRequired: false,
  rateLimitEnabled: true,
  anonymousLimit: 50,
  keyedLimit: 500,
  trustedProxies: [],
};

function logCapture() {
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
  return { lines, logger };
}

async function api(
  store: Store,
  access: Partial<AccessControlOptions>,
  logger: pino.Logger = silentLogger,
): Promise<FastifyInstance> {
  const { app } = await startTestApi({
    store,
    logger,
    accessControl: { ...BASE, counters: new AccessCounters(), ...access },
  });
  return app;
}

function get(app: FastifyInstance, options: { key?: string; ip?: string; xff?: string; url?: string } = {}) {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.xff !== undefined) headers['x-forwarded-for'] = options.xff;
  const request: InjectOptions = { method: 'GET', url: options.url ?? URL_OK, headers };
  if (options.ip) request.remoteAddress = options.ip;
  return app.inject(request);
}

/** Sends the GETs on one connection in a single write (HTTP/1.1 pipelining); the answers' status codes in order. */
async function pipelined(base: URL, paths: string[]): Promise<number[]> {
  const socket = connect(Number(base.port), base.hostname);
  await once(socket, 'connect');
  socket.write(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: ${base.host}\r\n\r\n`).join(''));
  let received = '';
  const statuses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  socket.setEncoding('utf8');
  for await (const chunk of socket) {
    received += chunk as string;
    if (statuses().length >= paths.length) break;
  }
  socket.destroy();
  return statuses();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A well-formed key nobody created. */
const madeUp = () => `sk_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`;

/**
 * The status a request with `key` gets once it is `expected`, asked every 20 ms for at most `ms` (of `/extended`,
 * which answers 200 on any chain, an empty one too).
 */
async function statusWithin(app: FastifyInstance, key: string, expected: number, ms: number) {
  const deadline = Date.now() + ms;
  const ask = async () => (await get(app, { key, ip: '198.51.100.7', url: '/extended' })).statusCode;
  let status = await ask();
  while (status !== expected && Date.now() < deadline) {
    await sleep(20);
    status = await ask();
  }
  return status;
}

function rateHeaders(res: { headers: Record<string, unknown> }) {
  return {
    limit: res.headers['ratelimit-limit'],
    remaining: res.headers['ratelimit-remaining'],
    reset: res.headers['ratelimit-reset'],
  };
}

for (const engine of testEngines(import.meta.url)) {
  describe(`API keys (${engine})`, () => {
    let store: Store;
    before(async () => {
      store = await storeWithChain(engine);
    });
    after(async () => {
      await store?.close();
    });

    test('no key: served as anonymous; 401 when keys are required', async () => {
      const open = await api(store, {});
      const required = await api(store, { apiKeysRequired: true });
      try {
        const res = await get(open);
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().height, TIP_HEIGHT);
        assert.deepEqual(rateHeaders(res), { limit: '50', remaining: '49', reset: '60' });

        const denied = await get(required);
        assert.equal(denied.statusCode, 401);
        assert.deepEqual(denied.json(), {
          statusCode: 401,
          error: 'Unauthorized',
          message: 'An API key is required: send it in the X-API-Key header',
        });
        assert.equal(denied.headers['cache-control'], 'no-store');
        assert.equal(denied.headers['ratelimit-limit'], '50');
        // An empty header is no key at all.
        assert.equal((await get(required, { key: '' })).statusCode, 401);

        const { key } = await createApiKey(store, 'required');
        const allowed = await get(required, { key });
        assert.equal(allowed.statusCode, 200);
        assert.equal(allowed.json().height, TIP_HEIGHT);
        assert.equal(allowed.headers['ratelimit-limit'], '500');
      } finally {
        await open.close();
        await required.close();
      }
    });

    test('a bad key gets 403, whether keys are required or not', async () => {
      const counters = new AccessCounters();
      const open = await api(store, { counters });
      const required = await api(store, { apiKeysRequired: true });
      try {
        const { key, id } = await createApiKey(store, 'real');
        const wrongSecret = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
        const unknownId = `sk_${id === '000000000000' ? '111111111111' : '000000000000'}${key.slice(15)}`;
        for (const bad of ['nope', key + 'x', wrongSecret, unknownId, key.toUpperCase()]) {
          for (const app of [open, required]) {
            const res = await get(app, { key: bad });
            assert.equal(res.statusCode, 403, bad);
            assert.deepEqual(res.json(), {
              statusCode: 403,
              error: 'Forbidden',
              message: 'The API key in X-API-Key is invalid or revoked',
            });
          }
        }
        assert.equal(counters.rejected[403], 5);
        // Two X-API-Key headers are not one key.
        const twice = await open.inject({ method: 'GET', url: URL_OK, headers: { 'x-api-key': [key, key] } });
        assert.equal(twice.statusCode, 403);
        // A bad key counts against the client's IP, with the anonymous limit.
        assert.equal(twice.headers['ratelimit-limit'], '50');
        assert.equal((await get(open, { key })).statusCode, 200);
      } finally {
        await open.close();
        await required.close();
      }
    });

    test('a revoked key gets 403 at once in the process that revoked it', async () => {
      const app = await api(store, {});
      try {
        const early = await createApiKey(store, 'revoked before use');
        const output = { out: () => {}, info: () => {} };
        assert.equal(await runKeysCommand(store, { action: 'revoke', id: early.id }, output), 0);
        assert.equal((await get(app, { key: early.key })).statusCode, 403);

        const used = await createApiKey(store, 'revoked in use');
        assert.equal((await get(app, { key: used.key })).statusCode, 200);
        assert.equal(await runKeysCommand(store, { action: 'revoke', id: used.id }, output), 0);
        const res = await get(app, { key: used.key });
        assert.equal(res.statusCode, 403);
        assert.equal(res.json().message, 'The API key in X-API-Key is invalid or revoked');
      } finally {
        await app.close();
      }
    });

    test("keys changed behind a server's back reach it within its refresh period", async () => {
      const app = await api(store, { keyRefreshMs: 100 });
      try {
        // Written by hand, as a process without this server's registry would: nothing announces it here
        // but the periodic check (what a read replica relies on).
        const id = randomBytes(6).toString('hex');
        const key = `sk_${id}_${randomBytes(32).toString('base64url')}`;
        const hash = createHash('sha256').update(key).digest('hex');
        await store.sql`INSERT INTO api_keys (id, key_hash, label) VALUES (${id}, ${hash}, 'by hand')`;
        assert.equal(await statusWithin(app, key, 200, 2_000), 200);
        await store.sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${id}`;
        assert.equal(await statusWithin(app, key, 403, 2_000), 403);
      } finally {
        await app.close();
      }
    });

    test('a valid key is served on its own budget whatever its IP spent, on anonymous requests or made-up keys', async () => {
      const counters = new AccessCounters();
      const app = await api(store, { counters });
      try {
        for (let i = 1; i <= 50; i++) assert.equal((await get(app)).statusCode, 200, `anonymous ${i}`);
        assert.equal((await get(app)).statusCode, 429);
        for (let i = 0; i < 5; i++) {
          assert.equal((await get(app, { key: madeUp() })).statusCode, 429);
        }
        // A key created now, as `keys create` does, first used from that IP.
        const lines: string[] = [];
        const created = { out: (t: string) => lines.push(t), info: () => {} };
        assert.equal(await runKeysCommand(store, { action: 'create', label: 'behind a NAT' }, created), 0);
        const [key] = lines;
        for (const [i, ip] of ['127.0.0.1', '192.0.2.4', '127.0.0.1'].entries()) {
          const res = await get(app, { key, ip });
          assert.equal(res.statusCode, 200, `${ip}: ${res.body}`);
          assert.equal(res.json().height, TIP_HEIGHT);
          assert.equal(res.headers['ratelimit-limit'], '500');
          assert.equal(res.headers['ratelimit-remaining'], String(499 - i));
        }
        assert.deepEqual(counters.rejected, { 401: 0, 403: 0, 429: 6 });
        assert.deepEqual(counters.admitted, { anonymous: 50, keyed: 3 });
      } finally {
        await app.close();
      }
    });

    test('last use is recorded', async () => {
      const app = await api(store, {});
      try {
        const { key, id } = await createApiKey(store, 'touched');
        const before_ = await store.sql`SELECT last_used_at FROM api_keys WHERE id = ${id}`;
        assert.equal(before_[0].last_used_at, null);
        assert.equal((await get(app, { key })).statusCode, 200);
        let lastUsed: Date | null = null;
        for (let i = 0; i < 50 && !lastUsed; i++) {
          await sleep(20);
          [{ last_used_at: lastUsed }] = await store.sql<{ last_used_at: Date | null }[]>`
            SELECT last_used_at FROM api_keys WHERE id = ${id}`;
        }
        assert.ok(lastUsed instanceof Date);
        assert.ok(Math.abs(lastUsed.getTime() - Date.now()) < 60_000);
      } finally {
        await app.close();
      }
    });

    test('keys are not recoverable from the database: only their SHA-256 is stored', async () => {
      const lines: string[] = [];
      const infos: string[] = [];
      const code = await runKeysCommand(
        store,
        { action: 'create', label: 'from the CLI' },
        { out: (t) => lines.push(t), info: (t) => infos.push(t) },
      );
      assert.equal(code, 0);
      assert.equal(lines.length, 1);
      const key = lines[0];
      assert.match(key, /^sk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
      const id = key.slice(3, 15);
      assert.match(infos[0], new RegExp(`API key ${id} created for "from the CLI"`));
      const secret = key.slice(16);

      const rows = await store.sql<{ row: string }[]>`SELECT row_to_json(k)::text AS row FROM api_keys k`;
      assert.ok(rows.length >= 1);
      for (const { row } of rows) {
        assert.ok(!row.includes(key), 'a row holds the key');
        assert.ok(!row.includes(secret), 'a row holds the secret');
      }
      const [stored] = await store.sql`SELECT key_hash, label FROM api_keys WHERE id = ${id}`;
      assert.equal(stored.key_hash, createHash('sha256').update(key).digest('hex'));
      assert.equal(stored.label, 'from the CLI');

      // `keys list` shows ids and labels, never hashes.
      const listed: string[] = [];
      await runKeysCommand(store, { action: 'list' }, { out: (t) => listed.push(t), info: () => {} });
      assert.match(listed[0], /^id\s+label\s+created\s+last used\s+revoked$/);
      const line = listed.find((l) => l.startsWith(id));
      assert.ok(line);
      assert.match(line, new RegExp(`^${id}  from the CLI\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  -\\s+-$`));
      assert.ok(!listed.join('\n').includes(String(stored.key_hash)));

      const noop = { out: () => {}, info: () => {} };
      assert.equal(await runKeysCommand(store, { action: 'revoke', id: 'ffffffffffff' }, noop), 1);
      assert.equal(await runKeysCommand(store, { action: 'revoke', id }, noop), 0);
      const again: string[] = [];
      assert.equal(
        await runKeysCommand(store, { action: 'revoke', id }, { out: () => {}, info: (t) => again.push(t) }),
        0,
      );
      assert.deepEqual(again, [`API key ${id} was already revoked`]);
      await assert.rejects(runKeysCommand(store, { action: 'create' }, noop), /needs --label/);
    });

    test('the event-observer port takes no keys and serves no read API', async () => {
      const observer = buildObserverServer({
        ingestor: new Ingestor(store, { isMainnet: false, logger: silentLogger }),
        logger: silentLogger,
        bodyLimitBytes: 1024 * 1024,
      });
      try {
        const { key } = await createApiKey(store, 'observer');
        const res = await observer.inject({ method: 'GET', url: URL_OK, headers: { 'x-api-key': key } });
        assert.equal(res.statusCode, 404);
        assert.equal(res.headers['ratelimit-limit'], undefined);
      } finally {
        await observer.close();
      }
    });

    test('keys never reach the logs', async () => {
      const { lines, logger } = logCapture();
      // An unreachable Redis makes the layer log on every request.
      const app = await api(store, { redisUrl: 'redis://127.0.0.1:1' }, logger);
      try {
        const { key } = await createApiKey(store, 'logged?');
        assert.equal((await get(app, { key })).statusCode, 200);
        assert.equal((await get(app, { key: key + 'x' })).statusCode, 403);
        await app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-api-key': key } });
        await sleep(50);
        assert.ok(lines.length > 0);
        assert.ok(!lines.join('\n').includes(key.slice(16)));
        assert.ok(!lines.join('\n').includes(key.slice(16, 30)));
      } finally {
        await app.close();
      }
    });
  });
}

describe(`rate limits (${engines[0]})`, () => {
  let store: Store;
  before(async () => {
    store = await storeWithChain(engines[0]);
  });
  after(async () => {
    await store?.close();
  });

  test('the 51st anonymous request in a minute gets 429 with Retry-After; a keyed client goes on to its 500th', async () => {
    const counters = new AccessCounters();
    const app = await api(store, { counters });
    try {
      const { key } = await createApiKey(store, 'busy');
      // the key is used once before the IP's anonymous budget runs out (see below)
      assert.equal((await get(app, { key })).headers['ratelimit-remaining'], '499');
      for (let i = 1; i <= 50; i++) {
        const res = await get(app);
        assert.equal(res.statusCode, 200, `anonymous request ${i}`);
        assert.equal(res.headers['ratelimit-remaining'], String(50 - i));
        assert.equal(res.headers['retry-after'], undefined);
      }
      const limited = await get(app);
      assert.equal(limited.statusCode, 429);
      assert.deepEqual(limited.json(), {
        statusCode: 429,
        error: 'Too Many Requests',
        message: `Rate limit exceeded: 50 requests per minute for anonymous clients of this IP address; retry in ${limited.headers['retry-after']} s`,
      });
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
      assert.equal(limited.headers['ratelimit-limit'], '50');
      assert.equal(limited.headers['ratelimit-remaining'], '0');
      assert.equal(limited.headers['ratelimit-reset'], String(retryAfter));
      assert.equal(limited.headers['cache-control'], 'no-store');
      // Browsers may read them.
      assert.equal(
        limited.headers['access-control-expose-headers'],
        'X-API-Version, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After',
      );

      // The same IP with a key has its own budget.
      for (let i = 2; i <= 500; i++) {
        const res = await get(app, { key });
        if (res.statusCode !== 200 || res.headers['ratelimit-remaining'] !== String(500 - i)) {
          assert.fail(
            `keyed request ${i}: ${res.statusCode} remaining ${res.headers['ratelimit-remaining']}`,
          );
        }
      }
      const keyedLimited = await get(app, { key });
      assert.equal(keyedLimited.statusCode, 429);
      assert.match(
        keyedLimited.json().message,
        /^Rate limit exceeded: 500 requests per minute for this API key/,
      );
      assert.ok(Number(keyedLimited.headers['retry-after']) >= 1);
      assert.equal((await get(app)).statusCode, 429);
      // A key first used from that IP now has a budget of its own too.
      const fresh = await createApiKey(store, 'first used from a busy IP');
      assert.equal((await get(app, { key: fresh.key })).statusCode, 200);
      assert.equal(counters.rejected[429], 3);
      assert.deepEqual(counters.admitted, { anonymous: 50, keyed: 501 });
    } finally {
      await app.close();
    }
  });

  test('limits reset after the window', async () => {
    // A window long enough for a loaded 2-core machine to send the requests inside it.
    const app = await api(store, { anonymousLimit: 3, keyedLimit: 4, windowMs: 1_000 });
    try {
      const { key } = await createApiKey(store, 'window');
      for (let i = 0; i < 4; i++) assert.equal((await get(app, { key })).statusCode, 200);
      for (let i = 0; i < 3; i++) assert.equal((await get(app)).statusCode, 200);
      const limited = await get(app);
      assert.equal(limited.statusCode, 429);
      assert.match(limited.json().message, /3 requests per 1 s/);
      assert.equal(limited.headers['retry-after'], '1');
      assert.equal((await get(app, { key })).statusCode, 429);
      await sleep(1_050);
      const anonymous = await get(app);
      assert.equal(anonymous.statusCode, 200);
      assert.equal(anonymous.headers['ratelimit-remaining'], '2');
      const keyed = await get(app, { key });
      assert.equal(keyed.statusCode, 200);
      assert.equal(keyed.headers['ratelimit-remaining'], '3');
    } finally {
      await app.close();
    }
  });

  test('a pipelined burst gets exactly its budget: 51 requests in a fresh window → 50 × 200, then 429', async () => {
    const app = await api(store, {});
    try {
      const base = new URL(await listenLocal(app));
      // One write: the server parses the whole burst from one read of the socket.
      const statuses = await pipelined(base, Array(51).fill(URL_OK));
      assert.deepEqual(statuses, [...Array(50).fill(200), 429]);
    } finally {
      await app.close();
    }
  });

  test('a key created or revoked by another process reaches a server at once, by notification', async () => {
    const url = await createTestDatabaseUrl();
    const server = new Store(await connectTestDatabase(url));
    await migrate(server.sql);
    const cli = new Store(await connectTestDatabase(url));
    // no periodic re-read: only the notification can tell the server
    const app = await api(server, { keyRefreshMs: 600_000 });
    try {
      const { key, id } = await createApiKey(cli, 'from another process');
      assert.equal(await statusWithin(app, key, 200, 1_000), 200);
      assert.equal(await revokeKey(cli, id), 'revoked');
      assert.equal(await statusWithin(app, key, 403, 1_000), 403);
    } finally {
      await app.close();
      await server.close();
      await cli.close();
    }
  });

  test('made-up keys from many IPs never push a valid key out: it is served on its own budget', async () => {
    const app = await api(store, { anonymousLimit: 50 });
    try {
      const { key } = await createApiKey(store, 'among made-up keys');
      assert.equal((await get(app, { key, ip: '203.0.113.1' })).statusCode, 200);
      // 10,500 made-up key ids, 50 from each of 210 IPs: each IP's budget spent by the end
      const statuses = new Map<number, number>();
      for (let i = 0; i < 10_500; i++) {
        const ip = `198.18.${Math.floor(i / 50) >> 8}.${Math.floor(i / 50) & 255}`;
        const status = (await get(app, { key: madeUp(), ip, url: '/extended' })).statusCode;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      assert.deepEqual([...statuses], [[403, 10_500]]);
      assert.equal((await get(app, { key: madeUp(), ip: '198.18.0.0', url: '/extended' })).statusCode, 429);
      const res = await get(app, { key, ip: '198.18.0.0' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-remaining'], '498');
    } finally {
      await app.close();
    }
  });

  test('made-up keys cost no key lookup: 403 while the IP has budget, then 429', async () => {
    // On a database of its own, so the lookups can be counted: PostgreSQL's table statistics (a server
    // backend publishes its counts when it exits, so both the migration's and the server's pools are closed).
    const url = await createTestDatabaseUrl();
    const migrated = await connectTestDatabase(url);
    await migrate(migrated.sql);
    await migrated.close();
    const scans = async () => {
      const db = await connectTestDatabase(url);
      try {
        const [row] = await db.sql<{ scans: number }[]>`
          SELECT (coalesce(idx_scan, 0) + seq_scan)::int AS scans FROM pg_stat_user_tables
          WHERE relname = 'api_keys'`;
        return row.scans;
      } finally {
        await db.close();
      }
    };
    const before = await scans();
    const own = new Store(await connectTestDatabase(url));
    // no periodic re-read during the test: only the registry's read at start touches the table
    const app = await api(own, { anonymousLimit: 5, keyRefreshMs: 600_000 });
    const statuses: number[] = [];
    try {
      for (let i = 0; i < 300; i++) {
        statuses.push((await get(app, { key: madeUp(), url: '/extended' })).statusCode);
      }
    } finally {
      await app.close();
      await own.close();
    }
    // 5 made-up keys refused (403, counted against the IP), then 295 refused for the IP's spent budget.
    assert.deepEqual(statuses, [...Array(5).fill(403), ...Array(295).fill(429)]);
    // Two scans, both at start (the table's fingerprint and the keys): none per request.
    assert.equal((await scans()) - before, 2);
  });

  test('anonymous budgets are per IP; a key has one budget whatever the IP', async () => {
    const app = await api(store, { anonymousLimit: 2, keyedLimit: 3 });
    try {
      const { key } = await createApiKey(store, 'roaming');
      for (const ip of ['192.0.2.1', '192.0.2.2']) {
        assert.equal((await get(app, { ip })).headers['ratelimit-remaining'], '1');
        assert.equal((await get(app, { ip })).statusCode, 200);
        assert.equal((await get(app, { ip })).statusCode, 429);
      }
      const ips = ['192.0.2.10', '198.51.100.3', '2001:db8::1'];
      for (const [i, ip] of ips.entries()) {
        const res = await get(app, { key, ip });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['ratelimit-remaining'], String(2 - i));
      }
      assert.equal((await get(app, { key, ip: '203.0.113.50' })).statusCode, 429);
    } finally {
      await app.close();
    }
  });

  test('X-Forwarded-For is ignored from untrusted peers and honoured from trusted proxies', async () => {
    const untrusted = await api(store, { anonymousLimit: 2 });
    const proxied = await api(store, {
      anonymousLimit: 2,
      trustedProxies: parseTrustedProxies('10.0.0.0/8'),
    });
    try {
      // A client cannot buy a fresh budget by inventing forwarded addresses.
      const peer = '203.0.113.9';
      assert.equal((await get(untrusted, { ip: peer, xff: '198.51.100.1' })).statusCode, 200);
      assert.equal((await get(untrusted, { ip: peer, xff: '198.51.100.2' })).statusCode, 200);
      assert.equal((await get(untrusted, { ip: peer, xff: '198.51.100.3' })).statusCode, 429);
      // The same forwarded addresses through the trusted proxy: each client has its own budget.
      for (const client of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
        const res = await get(proxied, { ip: '10.1.2.3', xff: client });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['ratelimit-remaining'], '1');
      }
      // The proxy appends the real peer: what the client wrote to the left of it is not believed.
      const spoof = await get(proxied, { ip: '10.1.2.3', xff: '198.51.100.99, 198.51.100.1' });
      assert.equal(spoof.headers['ratelimit-remaining'], '0');
      // Through a chain of trusted proxies, the first untrusted address from the right is the client.
      const chain = await get(proxied, { ip: '10.1.2.3', xff: '198.51.100.2, 10.9.9.9' });
      assert.equal(chain.headers['ratelimit-remaining'], '0');
      assert.equal((await get(proxied, { ip: '10.1.2.3', xff: '198.51.100.2' })).statusCode, 429);
      // A peer outside the list is not a proxy.
      const direct = await get(proxied, { ip: '192.0.2.77', xff: '198.51.100.3' });
      assert.equal(direct.headers['ratelimit-remaining'], '1');
    } finally {
      await untrusted.close();
      await proxied.close();
    }
  });

  test('every read route of the OpenAPI document, those beyond the ten too, takes keys and limits', async () => {
    const app = await api(store, { anonymousLimit: 1, apiKeysRequired: true });
    try {
      const document = (await get(app, { url: '/openapi.json' })).json<{ paths: Record<string, object> }>();
      const paths = Object.keys(document.paths).filter((path) => !EXEMPT_ROUTE_PATHS.includes(path));
      assert.ok(paths.includes('/extended/v1/search/{id}') && paths.length >= 28, `${paths.length} routes`);
      // each from its own address: keys required (401), then its budget of one spent (429)
      for (const [i, path] of paths.entries()) {
        const url = path.replace(/\{[a-z_]+\}/g, 'x');
        const ip = `198.51.100.${i + 1}`;
        assert.equal((await get(app, { url, ip })).statusCode, 401, url);
        assert.equal((await get(app, { url, ip })).statusCode, 429, url);
      }
    } finally {
      await app.close();
    }
  });

  test('health, readiness and docs routes are exempt; unknown routes are not', async () => {
    const app = await api(store, { anonymousLimit: 1, apiKeysRequired: true });
    // Every exempt path is a real route of the server (status, OpenAPI, docs page): the list names no path
    // that answers 404. (Metrics are served on their own port, outside the API.)
    for (const path of EXEMPT_ROUTE_PATHS) assert.ok(app.hasRoute({ method: 'GET', url: path }), path);
    app.get('/doc/static/app.js', async () => ({ ok: 'asset' }));
    app.get('/own-opt-out', { config: { accessControl: false } }, async () => ({ ok: 'own' }));
    try {
      for (const url of [...EXEMPT_ROUTE_PATHS, '/doc/static/app.js', '/own-opt-out']) {
        for (let i = 0; i < 3; i++) {
          const res = await get(app, { url, key: i === 2 ? 'not-a-key' : undefined });
          assert.equal(res.statusCode, 200, url);
          assert.equal(res.headers['ratelimit-limit'], undefined);
        }
      }
      assert.deepEqual(EXEMPT_ROUTE_PATHS, ['/health', '/ready', '/openapi.json', '/doc']);
      const missing = await get(app, { url: '/documents' });
      assert.equal(missing.statusCode, 401);
      assert.equal(missing.headers['ratelimit-remaining'], '0');
      const over = await get(app, { url: '/nowhere' });
      assert.equal(over.statusCode, 429);
      // A CORS preflight never carries the key.
      const preflight = await app.inject({
        method: 'OPTIONS',
        url: URL_OK,
        headers: {
          origin: 'https://example.org',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'x-api-key',
        },
      });
      assert.equal(preflight.statusCode, 204);
      assert.equal(preflight.headers['access-control-allow-headers'], 'x-api-key');
    } finally {
      await app.close();
    }
  });

  test('RATE_LIMIT_ENABLED=false: no limit and no headers, keys still checked', async () => {
    const app = await api(store, { rateLimitEnabled: false, anonymousLimit: 1 });
    try {
      for (let i = 0; i < 5; i++) {
        const res = await get(app);
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['ratelimit-limit'], undefined);
      }
      assert.equal((await get(app, { key: 'sk_bad' })).statusCode, 403);
    } finally {
      await app.close();
    }
  });

  test('configuration: defaults, environment, and a bad TRUSTED_PROXIES names the variable', () => {
    const defaults = accessControlFromConfig(loadConfig({}));
    assert.deepEqual(defaults, {
      apiKeysRequired: false,
      rateLimitEnabled: true,
      anonymousLimit: 50,
      keyedLimit: 500,
      trustedProxies: [],
      redisUrl: undefined,
    });
    const set = accessControlFromConfig(
      loadConfig({
        API_KEYS_REQUIRED: 'true',
        RATE_LIMIT_ENABLED: 'false',
        RATE_LIMIT_ANON_PER_MIN: '10',
        RATE_LIMIT_KEY_PER_MIN: '1000',
        TRUSTED_PROXIES: '10.0.0.1, 192.168.0.0/16,loopback,fd00::/8',
        REDIS_URL: 'redis://127.0.0.1:6390/2',
      }),
    );
    assert.deepEqual(set, {
      apiKeysRequired: true,
      rateLimitEnabled: false,
      anonymousLimit: 10,
      keyedLimit: 1000,
      trustedProxies: ['10.0.0.1', '192.168.0.0/16', 'loopback', 'fd00::/8'],
      redisUrl: 'redis://127.0.0.1:6390/2',
    });
    assert.throws(() => parseTrustedProxies('10.0.0.1,10.0.0.0/33'), ConfigError);
    assert.throws(() => parseTrustedProxies('proxy.example'), /TRUSTED_PROXIES: "proxy.example"/);
    assert.throws(() => loadConfig({ RATE_LIMIT_ANON_PER_MIN: '0' }), /RATE_LIMIT_ANON_PER_MIN/);
    assert.throws(() => loadConfig({ REDIS_URL: 'localhost:6379' }), /REDIS_URL/);
  });
});

describe(`rate limits shared in Redis (${engines[0]})`, { skip: redisSkipReason }, () => {
  let store: Store;
  let redis: TestRedis;
  let admin: Redis;
  before(async () => {
    // No skip: if Redis cannot be started these tests fail, saying why.
    redis = await startRedis();
    admin = new Redis(redis.url, { lazyConnect: true });
    await admin.connect();
    store = await storeWithChain(engines[0]);
  });
  beforeEach(async () => {
    if (admin.status !== 'ready') await admin.connect().catch(() => {});
    await admin.flushall();
  });
  after(async () => {
    admin?.disconnect();
    await redis?.destroy();
    await store?.close();
  });

  test('two server instances on one Redis share the same counter', async () => {
    const a = await api(store, { redisUrl: redis.url, anonymousLimit: 50 });
    const b = await api(store, { redisUrl: redis.url, anonymousLimit: 50 });
    try {
      const baseA = await a.listen({ host: '127.0.0.1', port: 0 });
      const baseB = await b.listen({ host: '127.0.0.1', port: 0 });
      const { key } = await createApiKey(store, 'two instances');
      const keyed = async (base: string) => {
        const res = await fetch(`${base}${URL_OK}`, { headers: { 'x-api-key': key } });
        await res.arrayBuffer();
        return res.headers.get('ratelimit-remaining');
      };
      assert.equal(await keyed(baseA), '499');
      assert.equal(await keyed(baseB), '498');
      for (let i = 1; i <= 50; i++) {
        const res = await fetch(`${i % 2 ? baseA : baseB}${URL_OK}`);
        assert.equal(res.status, 200, `request ${i}`);
        assert.equal(res.headers.get('ratelimit-remaining'), String(50 - i));
        await res.arrayBuffer();
      }
      for (const base of [baseA, baseB]) {
        const res = await fetch(`${base}${URL_OK}`);
        assert.equal(res.status, 429);
        assert.ok(Number(res.headers.get('retry-after')) >= 1);
        assert.equal(((await res.json()) as { statusCode: number }).statusCode, 429);
      }
      // The key's own budget, shared too, goes on from the same IP.
      assert.equal(await keyed(baseA), '497');
      assert.equal(await keyed(baseB), '496');
      const keys = (await admin.keys('stacks-read-api:rate-limit:*')).sort();
      assert.equal(keys.length, 2);
      assert.ok(keys.some((k) => k.endsWith(':127.0.0.1')));
      assert.ok(keys.some((k) => k.includes(`key:${key.slice(3, 15)}`)));
      assert.ok(!keys.join().includes(key.slice(16)));
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('counters in Redis expire with the window', async () => {
    const app = await api(store, { redisUrl: redis.url, anonymousLimit: 2, windowMs: 1_000 });
    try {
      assert.equal((await get(app)).statusCode, 200);
      assert.equal((await get(app)).statusCode, 200);
      const limited = await get(app);
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.headers['retry-after'], '1');
      await sleep(1_050);
      const res = await get(app);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-remaining'], '1');
    } finally {
      await app.close();
    }
  });

  test('Redis down: requests are still served, the failure is logged and counted', async () => {
    const counters = new AccessCounters();
    const { lines, logger } = logCapture();
    const app = await api(store, { redisUrl: redis.url, anonymousLimit: 2, counters }, logger);
    try {
      const { key } = await createApiKey(store, 'outage');
      assert.equal((await get(app)).headers['ratelimit-remaining'], '1');
      await redis.stop();
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        const res = await get(app, { key: i === 4 ? key : undefined });
        assert.equal(res.statusCode, 200);
        assert.ok(Date.now() - started < 1_000, 'served without waiting for Redis');
        assert.equal(res.headers['ratelimit-limit'], i === 4 ? '500' : '2');
        assert.equal(res.headers['ratelimit-remaining'], i === 4 ? '500' : '2');
      }
      assert.equal(counters.rateLimitStoreErrors, 5);
      const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string });
      assert.ok(
        logged.some(
          (l) => l.level === 50 && l.msg === 'rate-limit store failed: request served without a limit',
        ),
      );
      assert.ok(!lines.join('\n').includes(key.slice(16)));
      // A bad key is still refused while Redis is down.
      assert.equal((await get(app, { key: key + 'x' })).statusCode, 403);

      // Back up: the client reconnects by itself and limits apply again.
      await redis.start();
      let remaining: unknown;
      for (let i = 0; i < 100 && remaining !== '1'; i++) {
        await sleep(50);
        remaining = (await get(app, { ip: '192.0.2.200' })).headers['ratelimit-remaining'];
      }
      assert.equal(remaining, '1');
    } finally {
      await app.close();
    }
  });

  test('Redis unreachable from the start: served, fail open', async () => {
    const counters = new AccessCounters();
    const app = await api(store, { redisUrl: 'redis://127.0.0.1:1', anonymousLimit: 1, counters });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await get(app)).statusCode, 200);
      assert.equal(counters.rateLimitStoreErrors, 3);
    } finally {
      await app.close();
    }
  });
});

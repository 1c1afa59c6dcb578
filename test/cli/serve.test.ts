import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { serve } from '../../src/cli/serve.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { readTsv, type RecordedMessage } from '../../src/protocol/tsv.js';
import { migrate } from '../../src/store/migrate.js';
import {
  connectTestDatabase,
  createTestDatabaseUrl,
  silentLogger,
  stopOwnCluster,
} from '../support/database.js';
import { compiledMain } from '../support/compiled.js';
import { baseUrlOf } from '../support/http.js';
import { freePort } from '../support/postgres.js';
import { serveConfig, serveEnv, TESTNET } from '../support/serve-config.js';
import { fixtureFile } from '../support/shared.js';
import { poll } from '../support/poll.js';

/** Every 100 ms, for 60 s at most. */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined>) => poll(what, probe, { everyMs: 100 });

// Run modes and graceful shutdown, on PostgreSQL (a child process needs a database it can reach by URL).

after(stopOwnCluster);

const root = fileURLToPath(new URL('../..', import.meta.url));
const BLOCK_1 = {
  hash: '0xdb48727afd99b3ff5fb8b1a0ee294bc3ed7d5e16c2b83a750fc34a3d314fc8a9',
  index_block_hash: '0x07a570acd34466cabac8b81b24b6e0ab135b7aa90750506f9d0d9196e2af44ee',
};

async function mocknetMessages(count: number): Promise<RecordedMessage[]> {
  const messages: RecordedMessage[] = [];
  for await (const m of readTsv(fixtureFile('mocknet'))) {
    messages.push(m);
    if (messages.length === count) break;
  }
  return messages;
}

const post = (base: string, m: RecordedMessage) =>
  fetch(`${base}${m.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: m.payload,
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves true when a TCP connection to the port is refused. */
/**
 * How many established TCP connections to `port` the process `pid` holds (Linux: its socket fds matched with
 * /proc/net/tcp), or undefined where /proc cannot tell. A request whose connection the server has not accepted
 * yet is reset when the listener closes: the graceful-shutdown test waits for its reads to be accepted.
 */
function acceptedConnections(pid: number, port: number): number | undefined {
  if (!existsSync(`/proc/${pid}/fd`) || !existsSync('/proc/net/tcp')) return undefined;
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (link.startsWith('socket:[')) inodes.add(link.slice('socket:['.length, -1));
    } catch {
      // closed meanwhile
    }
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let established = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // local address, remote address, state (01 = ESTABLISHED), ..., inode
    if (
      fields.length > 9 &&
      fields[1].endsWith(`:${hexPort}`) &&
      fields[3] === '01' &&
      inodes.has(fields[9])
    ) {
      established++;
    }
  }
  return established;
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** A test's serve settings, with metrics (on a port the system picks). */
function testConfig(env: Record<string, string>) {
  return serveConfig({ METRICS_ENABLED: 'true', METRICS_PORT: '0', ...TESTNET, ...env });
}

describe('serve: run modes (in process)', () => {
  test('both servers: the observer writes, the API reads, metrics count both', async () => {
    const url = await createTestDatabaseUrl();
    const service = await serve(testConfig({ DATABASE_URL: url }), silentLogger, 'both');
    try {
      assert.ok(service.api && service.observer && service.metricsPort);
      const [first] = await mocknetMessages(1);
      const observerBase = baseUrlOf(service.observer);
      assert.equal((await post(observerBase, first)).status, 200);
      // a re-delivery, and a body that is not JSON: each message's timing reaches the metrics (they come
      // from the ingest thread with its answer)
      assert.equal((await post(observerBase, first)).status, 200);
      assert.equal((await post(observerBase, { ...first, payload: '{' })).status, 400);
      const block = await fetch(`${baseUrlOf(service.api)}/extended/v2/blocks/1`);
      assert.equal(block.status, 200);
      assert.equal(((await block.json()) as { hash: string }).hash, BLOCK_1.hash);
      const text = await (await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`)).text();
      assert.match(text, /^stacks_api_chain_tip_height 1$/m);
      assert.match(
        text,
        /^stacks_api_ingest_message_duration_seconds_count\{path="\/new_block",outcome="applied"\} 1$/m,
      );
      assert.match(
        text,
        /^stacks_api_ingest_message_duration_seconds_count\{path="\/new_block",outcome="duplicate"\} 1$/m,
      );
      assert.match(
        text,
        /^stacks_api_ingest_message_duration_seconds_count\{path="\/new_block",outcome="invalid"\} 1$/m,
      );
      assert.match(
        text,
        /^stacks_api_http_requests_total\{method="GET",route="\/extended\/v2\/blocks\/:height_or_hash",status_code="200"\} 1$/m,
      );
      assert.match(text, /^process_cpu_user_seconds_total /m);
    } finally {
      await service.stop();
    }
  });

  test('--write-only: the observer alone (and it migrates)', async () => {
    const url = await createTestDatabaseUrl();
    const service = await serve(
      testConfig({ DATABASE_URL: url, METRICS_ENABLED: 'false' }),
      silentLogger,
      'write-only',
    );
    try {
      assert.equal(service.api, undefined);
      assert.equal(service.metricsPort, undefined);
      assert.ok(service.observer);
      const [first] = await mocknetMessages(1);
      assert.equal((await post(baseUrlOf(service.observer), first)).status, 200);
    } finally {
      await service.stop();
    }
    const db = await connectTestDatabase(url);
    try {
      const [tip] = await db.sql`SELECT block_height FROM chain_tip`;
      assert.equal(tip.block_height, 1);
    } finally {
      await db.close();
    }
  });

  test('--read-only: the API alone, and never on a database that is not migrated', async () => {
    const url = await createTestDatabaseUrl();
    await assert.rejects(
      serve(testConfig({ DATABASE_URL: url }), silentLogger, 'read-only'),
      /database is not migrated \(pending: 001_schema, [^)]*\); run the migrate command/,
    );
    const db = await connectTestDatabase(url);
    await migrate(db.sql);
    await db.close();
    const service = await serve(testConfig({ DATABASE_URL: url }), silentLogger, 'read-only');
    try {
      assert.equal(service.observer, undefined);
      assert.ok(service.api);
      const ready = await fetch(`${baseUrlOf(service.api)}/ready`);
      assert.equal(ready.status, 200);
      assert.equal(((await ready.json()) as { database: { role: string } }).database.role, 'primary');
    } finally {
      await service.stop();
    }
  });

  test('replicas need the primary for writing', async () => {
    await assert.rejects(
      serve(testConfig({ DATABASE_REPLICA_URLS: 'postgres://127.0.0.1:1/x' }), silentLogger, 'both'),
      (err: unknown) =>
        err instanceof ConfigError && /DATABASE_REPLICA_URLS needs DATABASE_URL/.test(err.message),
    );
    assert.throws(
      () => loadConfig({ DATABASE_REPLICA_URLS: 'mysql://x' }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.message.startsWith(
          'DATABASE_REPLICA_URLS: expected comma-separated postgres://user:password@host:port/database URLs (',
        ),
    );
  });
});

describe('serve: graceful shutdown of a real process', () => {
  let child: ChildProcess | undefined;
  after(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  test('SIGTERM: stops accepting, finishes in-flight requests and the message being applied, exits 0', async () => {
    const url = await createTestDatabaseUrl();
    const [apiPort, observerPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    child = spawn(process.execPath, [compiledMain(), 'serve'], {
      cwd: root,
      env: {
        ...process.env,
        ...serveEnv({
          DATABASE_URL: url,
          DB_POOL_MAX: '2',
          API_PORT: String(apiPort),
          OBSERVER_PORT: String(observerPort),
          METRICS_ENABLED: 'true',
          METRICS_PORT: String(metricsPort),
          ...TESTNET,
          LOG_LEVEL: 'info',
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const api = `http://127.0.0.1:${apiPort}`;
    const observer = `http://127.0.0.1:${observerPort}`;
    await waitFor('the API', async () => ((await fetch(`${api}/health`)).ok ? true : undefined));
    await waitFor('the observer', async () => ((await fetch(`${observer}/`)).ok ? true : undefined));

    const messages = await mocknetMessages(6);
    for (const m of messages.slice(0, 5)) assert.equal((await post(observer, m)).status, 200);

    // Hold the chain-tip row: the next block, and every read that looks at the tip, wait in the database.
    const admin = postgres(url, { max: 2, onnotice: () => {} });
    const lock = await admin.reserve();
    try {
      await lock`BEGIN`;
      await lock`LOCK TABLE chain_tip IN ACCESS EXCLUSIVE MODE`;
      const applying = post(observer, messages[5]);
      const reads = Array.from({ length: 20 }, () => fetch(`${api}/extended/v2/blocks/1`));
      await waitFor('the block and the reads to wait on the lock', async () => {
        const [{ waiting }] = await admin<{ waiting: number }[]>`
          SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted AND relation = 'chain_tip'::regclass`;
        return waiting >= 2 ? waiting : undefined;
      });
      // every read accepted by the server (not still in its listen queue, which closing the listener resets)
      await waitFor('the 20 reads to be accepted', async () => {
        const accepted = acceptedConnections(child!.pid!, apiPort);
        return accepted === undefined || accepted >= reads.length ? true : undefined;
      });
      await sleep(200);

      child.kill('SIGTERM');
      await waitFor('the listeners to close', async () =>
        (await refused(apiPort)) && (await refused(observerPort)) ? true : undefined,
      );
      await sleep(300);
      assert.equal(child.exitCode, null, 'still running: requests are in flight');

      await lock`ROLLBACK`;
      const applied = await applying;
      assert.equal(applied.status, 200);
      assert.deepEqual(await applied.json(), { result: 'ok', outcome: 'applied' });
      for (const response of await Promise.all(reads)) {
        assert.equal(response.status, 200);
        const body = (await response.json()) as { height: number; hash: string; index_block_hash: string };
        assert.deepEqual(
          [body.height, body.hash, body.index_block_hash],
          [1, BLOCK_1.hash, BLOCK_1.index_block_hash],
        );
      }
    } finally {
      lock.release();
    }

    const [code, signal] = await exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, output.slice(-2000));
    assert.match(output, /"msg":"shutting down: finishing in-flight requests and messages"/);
    assert.match(output, /"msg":"stopped"/);
    // The block being applied at the signal was committed.
    const [tip] = await admin`SELECT block_height FROM chain_tip`;
    const [{ count }] = await admin`SELECT count(*)::int AS count FROM observer_messages`;
    await admin.end();
    assert.equal(tip.block_height, 6);
    assert.equal(count, 6);
  });
});

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { get } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { createTestDatabaseUrl, stopOwnCluster } from '../support/database.js';
import { freePort } from '../support/postgres.js';
import { sleep, startServe, type ServeProcess } from '../support/serve-process.js';

// Slow clients must not lock out the others (connection-limits.ts). `serve`, as a real process with an
// open-file limit of 1,024, against hosts of the loopback range (127.0.0.x are distinct client IPs): one host
// opening thousands of slow connections keeps at most API_MAX_CONNECTIONS_PER_IP of them, each for at most the
// header timeout, and another host is served all along; hosts together hold at most API_MAX_CONNECTIONS (lowered
// below the file limit). Before, the connections were kept until the process ran out of file descriptors, and
// then no one was served. The invariant beside it: a client within the bounds is always served, and a trusted
// proxy is bounded by the total only.

after(stopOwnCluster);

const PER_IP = 50;
const FILE_LIMIT = 1024;
/** API_MAX_CONNECTIONS (8,192 by default) lowered to the file limit less the 256 kept for the rest */
const TOTAL = FILE_LIMIT - 256;

interface HeldSockets {
  sockets: Socket[];
  /** how many the server has closed (or refused) so far */
  closed(): number;
  /** answers received, by status line */
  answers: string[];
  destroy(): void;
}

/** Opens `count` connections from `from` to `port`, each sending `text` once connected. */
async function hold(from: string, port: number, count: number, text: string): Promise<HeldSockets> {
  const sockets: Socket[] = [];
  const answers: string[] = [];
  let closed = 0;
  for (let i = 0; i < count; i += 100) {
    const batch = Array.from({ length: Math.min(100, count - i) }, () => {
      const socket = connect({ host: '127.0.0.1', port, localAddress: from });
      sockets.push(socket);
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        const status = /^HTTP\/1\.1 \d{3}/.exec(chunk);
        if (status) answers.push(status[0]);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => (closed += 1));
      return new Promise<void>((resolve) => {
        socket.once('connect', () => {
          socket.write(text);
          resolve();
        });
        socket.once('close', () => resolve());
      });
    });
    await Promise.all(batch);
  }
  return { sockets, answers, closed: () => closed, destroy: () => sockets.forEach((s) => s.destroy()) };
}

/** One GET from `from`; its status, or an error after 5 s. */
function getFrom(from: string, port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = get(
      { host: '127.0.0.1', port, path, localAddress: from, agent: false, timeout: 5_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    request.on('timeout', () => request.destroy(new Error(`GET ${path} from ${from}: no answer within 5 s`)));
    request.on('error', reject);
  });
}

async function waitUntil(what: string, done: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}

const openFiles = (service: ServeProcess) => readdirSync(`/proc/${service.pid}/fd`).length;

describe('connection limits (serve, open-file limit 1,024)', async () => {
  const apiPort = await freePort();
  const service = await startServe({
    databaseUrl: await createTestDatabaseUrl(),
    apiPort,
    observerPort: await freePort(),
    fileLimit: FILE_LIMIT,
    env: {
      LOG_REQUESTS: 'false',
      API_MAX_CONNECTIONS_PER_IP: String(PER_IP),
      API_HEADERS_TIMEOUT_MS: '3000',
      API_REQUEST_TIMEOUT_MS: '4000',
      API_KEEP_ALIVE_TIMEOUT_MS: '1000',
      TRUSTED_PROXIES: '127.0.0.3',
    },
  });
  after(() => service.kill('SIGTERM'));

  test('the total is lowered below the open-file limit, and said so', async () => {
    const line = await service.waitForLog((l) => l.msg.startsWith('API_MAX_CONNECTIONS=8192 does not fit'));
    assert.equal(line.level, 40);
    assert.equal(line.maxConnections, TOTAL);
    assert.equal(line.openFileLimit, FILE_LIMIT);
  });

  test('one host holding 3,000 slow connections: the others are served all along', async () => {
    const filesBefore = openFiles(service);
    // slowloris: a request line, then nothing
    const attacker = await hold('127.0.0.1', apiPort, 3_000, 'GET /extended HTTP/1.1\r\nHost: x\r\n');
    try {
      await waitUntil('all but the per-IP bound refused', () => attacker.closed() >= 3_000 - PER_IP);
      // Counted until it settles: taken at once under a load average of 8 it once read 105 (never alone). What
      // must hold is that the server keeps the per-IP bound's descriptors, not 3,000.
      await waitUntil(
        `at most ${filesBefore + PER_IP + 5} files open`,
        () => openFiles(service) <= filesBefore + PER_IP + 5,
      );
      for (let i = 0; i < 20; i++) assert.equal(await getFrom('127.0.0.2', apiPort, '/extended'), 200);
      // the slow ones are closed once the header timeout (3 s, checked every second) is over
      await waitUntil('the slow connections closed', () => attacker.closed() === 3_000);
      // the refused ones closed unanswered, the kept ones answered 408 at their header timeout
      assert.equal(attacker.answers.length, PER_IP);
      assert.deepEqual(new Set(attacker.answers), new Set(['HTTP/1.1 408']));
      const refused = await service.waitForLog((l) => l.msg.startsWith('connections refused'));
      assert.ok((refused.overPerIpLimit as number) >= 1);
      // and the host is served again, within its bound
      assert.equal(await getFrom('127.0.0.1', apiPort, '/extended'), 200);
    } finally {
      attacker.destroy();
    }
  });

  test('a trusted proxy is bounded by the total only; an idle keep-alive and an unfinished request are closed', async () => {
    const proxy = await hold('127.0.0.3', apiPort, 2 * PER_IP, 'GET /extended HTTP/1.1\r\nHost: x\r\n\r\n');
    try {
      await waitUntil('every proxied request answered', () => proxy.answers.length === 2 * PER_IP);
      assert.deepEqual(new Set(proxy.answers), new Set(['HTTP/1.1 200']));
      // idle after their answer: closed by the keep-alive timeout (1 s)
      await waitUntil('the idle keep-alive connections closed', () => proxy.closed() === 2 * PER_IP);
    } finally {
      proxy.destroy();
    }
    const unfinished = await hold(
      '127.0.0.4',
      apiPort,
      1,
      'POST /extended HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab',
    );
    // no POST route: answered 404 at once, and the connection, whose request never ends, closed at the request
    // timeout (4 s)
    await waitUntil('the unfinished request closed', () => unfinished.closed() === 1);
    assert.deepEqual(unfinished.answers, ['HTTP/1.1 404']);
    unfinished.destroy();
  });

  test('hosts together hold at most the total; once they leave, everyone is served again', async () => {
    const hosts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        hold(`127.0.0.${10 + i}`, apiPort, PER_IP, 'GET /extended HTTP/1.1\r\n'),
      ),
    );
    try {
      // 1,000 slow connections, 50 a host: the server keeps the total (until their header timeout, 3 s)
      const open = () => hosts.reduce((sum, h) => sum + h.sockets.length - h.closed(), 0);
      await waitUntil('the connections over the total refused', () => open() <= TOTAL);
      assert.ok(open() > TOTAL / 2, `${open()} held: refused by the total, not for another reason`);
      assert.ok(openFiles(service) < FILE_LIMIT, `${openFiles(service)} files open`);
    } finally {
      for (const h of hosts) h.destroy();
    }
    await sleep(200);
    assert.equal(await getFrom('127.0.0.2', apiPort, '/extended'), 200);
  });
});

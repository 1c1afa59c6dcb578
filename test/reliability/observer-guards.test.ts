import assert from 'node:assert/strict';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import { serve } from '../../src/cli/serve.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { buildObserverServer } from '../../src/ingest/observer-server.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabaseUrl, openTestStore, stopOwnCluster } from '../support/database.js';
import { serveConfig } from '../support/serve-config.js';
import { fixtureMessages } from '../support/shared.js';

// Who may post to the observer (OBSERVER_SECRET in the endpoint's path, the only credential a stacks-node can
// send), and how much what is posted may cost before it is parsed (the body budget). The invariant beside
// both: a node configured with the endpoint is always served (no secret: as before; a message within the
// limit is admitted whenever no other body is in flight, and again once the one in flight is done).

after(stopOwnCluster);

const SECRET = 'Zq3-unit_test-secret-0123456789';
const MB = 1024 * 1024;

function capturingLogger() {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

const messages = fixtureMessages('mainnet-reorg-scenario1');
const burnBlock = messages.find((m) => m.path === '/new_burn_block')!;

async function loggedMessages(store: Store): Promise<number> {
  const [{ count }] = await store.sql<
    { count: number }[]
  >`SELECT count(*)::int AS count FROM observer_messages`;
  return count;
}

/** Opens a raw connection to `port` and writes `text`; resolves with the socket once connected. */
async function rawRequest(port: number, text: string): Promise<{ socket: Socket; answer: Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  const answer = new Promise<string>((resolve) => {
    socket.on('data', () => {
      if (received.includes('\r\n\r\n')) resolve(received);
    });
    socket.on('close', () => resolve(received));
  });
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(text);
  return { socket, answer };
}

describe('observer secret', () => {
  test('without OBSERVER_SECRET the observer takes messages at their usual paths, as before', async () => {
    const store = await openTestStore('postgres');
    const { logger } = capturingLogger();
    const app = buildObserverServer({
      ingestor: new Ingestor(store, { isMainnet: true, logger }),
      logger,
      bodyLimitBytes: MB,
    });
    try {
      const res = await app.inject({ method: 'POST', url: burnBlock.path, payload: burnBlock.payload });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().outcome, 'applied');
      assert.equal((await app.inject({ url: '/' })).json().status, 'ready');
      assert.equal(await loggedMessages(store), 1);
    } finally {
      await app.close();
      await store.close();
    }
  });

  test('with it: 401 without the secret in the path (logged, nothing written, the body never read), 200 with it', async () => {
    const store = await openTestStore('postgres');
    const { logger, lines } = capturingLogger();
    const app = buildObserverServer({
      ingestor: new Ingestor(store, { isMainnet: true, logger }),
      logger,
      bodyLimitBytes: MB,
      secret: SECRET,
    });
    try {
      for (const url of [
        burnBlock.path,
        `/${SECRET.slice(0, -1)}${burnBlock.path}`,
        `/x${SECRET}${burnBlock.path}`,
        `${burnBlock.path}/${SECRET}`,
      ]) {
        const res = await app.inject({ method: 'POST', url, payload: burnBlock.payload });
        assert.equal(res.statusCode, 401, url);
        assert.deepEqual(res.json(), {
          statusCode: 401,
          error: 'Unauthorized',
          message: 'this observer takes messages at /<OBSERVER_SECRET>/<path> only',
        });
      }
      assert.equal((await app.inject({ url: '/' })).statusCode, 401);
      assert.equal(await loggedMessages(store), 0, 'nothing written');
      const refusals = lines.filter(
        (l) => l.msg === 'observer request without OBSERVER_SECRET in its path: 401',
      );
      assert.equal(refusals.length, 1, 'logged at once, then at most every 10 s with a count');
      assert.equal(refusals[0].level, 40);
      assert.equal(refusals[0].method, 'POST');

      const res = await app.inject({
        method: 'POST',
        url: `/${SECRET}${burnBlock.path}`,
        payload: burnBlock.payload,
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().outcome, 'applied');
      assert.equal((await app.inject({ url: `/${SECRET}/` })).json().status, 'ready');
      // routes, logs and errors see the URL without the secret
      const unknown = await app.inject({ method: 'POST', url: `/${SECRET}/no_such_path`, payload: '{}' });
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().message, 'no handler for POST /no_such_path');
      assert.equal(await loggedMessages(store), 1);
      assert.ok(!JSON.stringify(lines).includes(SECRET), 'the secret is never logged');

      // Over a socket: the 401 is sent before the body is read (a 100 MB body declared, none sent).
      await app.listen({ host: '127.0.0.1', port: 0 });
      const port = (app.server.address() as AddressInfo).port;
      const { socket, answer } = await rawRequest(
        port,
        `POST /new_block HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${100 * MB}\r\n\r\n{`,
      );
      assert.match(await answer, /^HTTP\/1\.1 401 /);
      socket.destroy();
    } finally {
      await app.close();
      await store.close();
    }
  });

  test('serve warns loudly when the observer listens beyond loopback without a secret', async () => {
    const url = await createTestDatabaseUrl();
    const config = (env: Record<string, string>) => serveConfig({ DATABASE_URL: url, ...env });
    const warnings = async (env: Record<string, string>) => {
      const { logger, lines } = capturingLogger();
      const service = await serve(config(env), logger, 'write-only');
      await service.stop();
      return lines.filter((l) => l.level === 40 && l.msg.startsWith('UNPROTECTED OBSERVER'));
    };
    const open = await warnings({ OBSERVER_HOST: '0.0.0.0' });
    assert.equal(open.length, 1);
    assert.match(
      open[0].msg,
      /OBSERVER_HOST=0\.0\.0\.0 is not a loopback address and OBSERVER_SECRET is empty/,
    );
    assert.equal((await warnings({ OBSERVER_HOST: '0.0.0.0', OBSERVER_SECRET: SECRET })).length, 0);
    assert.equal((await warnings({ OBSERVER_HOST: '127.0.0.1' })).length, 0);
  });
});

describe('observer body budget', () => {
  test('bodies in flight add up to at most the body limit: 503 before reading past it, admitted again once they are done', async () => {
    const store = await openTestStore('postgres');
    const { logger } = capturingLogger();
    // a message waits inside its transaction until released: it is "being applied"
    let release: () => void = () => undefined;
    let held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const ingestor = new Ingestor(store, {
      isMainnet: true,
      logger,
      beforeCommit: () => (holding ? held : undefined),
    });
    const limit = 4 * burnBlock.payload.length;
    const app = buildObserverServer({ ingestor, logger, bodyLimitBytes: limit });
    let receiving: Awaited<ReturnType<typeof rawRequest>> | undefined;
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const port = (app.server.address() as AddressInfo).port;
      const base = `http://127.0.0.1:${port}`;
      const post = (body: string, path = burnBlock.path) =>
        fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

      // a body being received: 3/4 of the limit declared, a few bytes sent
      receiving = await rawRequest(
        port,
        `POST /new_block HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${3 * burnBlock.payload.length}\r\n\r\n{"a`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const refused = await post(burnBlock.payload + ' '.repeat(burnBlock.payload.length));
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.deepEqual(await refused.json(), {
        statusCode: 503,
        error: 'Service Unavailable',
        message: 'other observer messages are being received or applied: send this one again',
      });
      // a message that fits beside it is admitted
      const fits = await post(burnBlock.payload);
      assert.equal(fits.status, 200);
      assert.equal(((await fits.json()) as { outcome: string }).outcome, 'applied');
      // the sender goes away: its budget is free again
      receiving.socket.destroy();
      receiving = undefined;
      await new Promise((resolve) => setTimeout(resolve, 100));

      // a message being applied holds its bytes until it is done
      const second = messages.filter((m) => m.path === '/new_burn_block')[1];
      holding = true;
      const applying = post(second.payload);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const big = await post(
        second.payload + ' '.repeat(3 * burnBlock.payload.length - second.payload.length - 10),
      );
      assert.equal(big.status, 503, 'over the budget while the other is applied');
      holding = false;
      release();
      assert.equal((await applying).status, 200);
      // and the same message, re-sent once the first copy is done (a node that timed out), is admitted
      const again = await post(
        second.payload + ' '.repeat(3 * burnBlock.payload.length - second.payload.length - 10),
      );
      assert.equal(again.status, 200);
      held = Promise.resolve();

      // over the limit itself: 413, as before
      const tooLarge = await post(' '.repeat(limit + 1));
      assert.equal(tooLarge.status, 413);
    } finally {
      receiving?.socket.destroy();
      release();
      await app.close();
      await store.close();
    }
  });
});

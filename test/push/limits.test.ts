import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import { connectWebSocketClient, StacksApiSocketClient } from '@stacks/blockchain-api-client';
import { WebSocket } from 'ws';
import { createApiKey } from '../../src/api/plugins/api-keys.js';
import { PushCounters, ServiceMetrics } from '../../src/metrics.js';
import type { PushLimits } from '../../src/push/index.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { addressOf, deployTx, transferTx } from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// The bounds of live push: who may connect (the API's access control, connections per IP and per key),
// subscriptions per connection, the size of a client's message, a client too far behind or silent, and the
// metrics that count them. Each with real sockets against a real server.

after(stopOwnCluster);

const LIMITS: PushLimits = {
  maxConnectionsPerIp: 2,
  maxConnectionsPerKey: 3,
  maxSubscriptions: 2,
  maxMessageBytes: 1024,
  maxBufferedBytes: 64 * 1024,
  pingIntervalMs: 1000,
};

const rpc = (id: number, method: string, params: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

/** A raw WebSocket to the JSON-RPC channel (for what the official client cannot do: stop reading, not pong). */
async function rawSocket(base: string, options: ConstructorParameters<typeof WebSocket>[2] = {}) {
  const socket = new WebSocket(`${base.replace('http', 'ws')}/extended/v1/ws`, options);
  const messages: unknown[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
  await once(socket, 'open');
  return { socket, messages };
}

/** The status line an upgrade is refused with (`Unexpected server response: N`). */
async function refusal(url: string, headers: Record<string, string> = {}): Promise<number> {
  const socket = new WebSocket(url, { headers });
  socket.on('error', () => {});
  const [, res] = (await once(socket, 'unexpected-response')) as [unknown, { statusCode: number }];
  socket.terminate();
  return res.statusCode;
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The arguments of the next `event` of a socket.io socket. */
const next = (
  socket: { once(event: string, listener: (...args: unknown[]) => void): unknown },
  event: string,
) => new Promise<unknown[]>((resolve) => socket.once(event, (...args) => resolve(args)));

/** A socket.io connection of the official client, without its reconnection. */
const socketIo = (base: string) =>
  new StacksApiSocketClient({ url: base, socketOpts: { reconnection: false } }).socket;

for (const engine of testEngines(import.meta.url)) {
  describe(`live push limits (${engine})`, () => {
    let api: TestApi;
    const counters = new PushCounters();
    const open: { close(): unknown }[] = [];
    after(async () => {
      // newest first and awaited: a server sharing api's store stops its feed before that store closes
      for (const c of open.reverse()) await c.close();
      await api?.close();
    });

    test('bounds, refusals and metrics', async () => {
      api = await startTestApi({
        engine,
        listen: true,
        push: { limits: LIMITS, counters },
        accessControl: {
          apiKeysRequired: false,
          rateLimitEnabled: true,
          anonymousLimit: 1000,
          keyedLimit: 1000,
          trustedProxies: [],
        },
      });
      const base = api.baseUrl;
      const wsUrl = `${base.replace('http', 'ws')}/extended/v1/ws`;

      // a plain request on the channel's path, and an upgrade elsewhere
      const plain = await fetch(`${base}/extended/v1/ws`);
      assert.equal(plain.status, 426);
      assert.match(((await plain.json()) as { message: string }).message, /takes WebSocket connections/);
      assert.equal(await refusal(`${base.replace('http', 'ws')}/extended/v1/nothing`), 404);
      assert.equal(await refusal(wsUrl, { 'x-api-key': 'sk_000000000000_bad' }), 403);

      // connections per IP without a key (both channels together), then per key whatever the IP
      const first = await connectWebSocketClient(wsUrl);
      open.push(first.webSocket as WebSocket);
      const io = socketIo(base);
      open.push(io);
      await next(io, 'connect');
      assert.equal(await refusal(wsUrl), 429);
      const refusedIo = socketIo(base);
      const [error] = (await next(refusedIo, 'connect_error')) as [Error];
      assert.match(error.message, /at most 2 live-push connections per IP address/);
      refusedIo.close();
      const { key } = await createApiKey(api.store, 'push');
      for (let i = 0; i < 3; i++) {
        const keyed = new WebSocket(wsUrl, { headers: { 'x-api-key': key } });
        open.push(keyed);
        await once(keyed, 'open');
      }
      assert.equal(await refusal(wsUrl, { 'x-api-key': key }), 429);
      assert.equal(counters.refused.get('per_ip'), 2);
      assert.equal(counters.refused.get('per_key'), 1);
      assert.equal(counters.connections.get('websocket'), 4);
      assert.equal(counters.connections.get('socket.io'), 1);

      // subscriptions per connection, on both channels; a bad topic says why
      const tx = await transferTx({ from: 'alice', to: addressOf('bob'), amount: 1, fee: 200, nonce: 0 });
      await first.subscribeMempool(() => {});
      await first.subscribeTxUpdates(tx.txid, () => {});
      await assert.rejects(
        first.subscribeBlocks(() => {}),
        {
          code: -32602,
          message: /may hold at most 2 subscriptions/,
        },
      );
      await assert.rejects(
        first.subscribeAddressTransactions('not-an-address', () => {}),
        {
          message: /address must be a Stacks address/,
        },
      );
      const ack = (topic: unknown) =>
        new Promise<string | null>((resolve) =>
          io.emit('subscribe', topic as never, (e: string | null) => resolve(e)),
        );
      assert.equal(await ack(['block', 'microblock']), null);
      assert.match((await ack('mempool')) ?? '', /may hold at most 2 subscriptions/);
      assert.match((await ack('transaction:0x12')) ?? '', /tx_id must be a transaction id/);
      assert.equal(counters.subscriptions.get('mempool'), 1);
      assert.equal(counters.subscriptions.get('block'), 1);
      assert.equal(counters.subscriptions.get('transaction'), 1);

      // the metrics endpoint publishes the same counts
      const text = await new ServiceMetrics({ pushCounters: counters }).text();
      assert.match(text, /stacks_api_push_connections\{channel="websocket"\} 4/);
      assert.match(text, /stacks_api_push_subscriptions\{topic="transaction"\} 1/);
      assert.match(text, /stacks_api_push_refused_total\{reason="per_ip"\} 2/);

      // a message larger than PUSH_MAX_MESSAGE_BYTES closes its connection (1009: too big)
      const big = await rawSocket(base, { headers: { 'x-api-key': key } }).catch(() => undefined);
      assert.equal(big, undefined, 'the key has no connection left');
      const ws = first.webSocket as WebSocket;
      const closed = once(ws, 'close');
      ws.send(rpc(9, 'subscribe', { event: 'block', padding: 'x'.repeat(2000) }));
      const [code] = (await closed) as [number];
      assert.equal(code, 1009);
      await waitFor('the closed connection released', () => counters.connections.get('websocket') === 3);
      assert.equal(counters.subscriptions.get('mempool'), 0);
    });

    test('a client that stops answering pings is closed', async () => {
      const { key } = await createApiKey(api.store, 'silent');
      // the ws client answers pings unless told not to
      const silent = await rawSocket(api.baseUrl, { headers: { 'x-api-key': key }, autoPong: false });
      const [code] = (await once(silent.socket, 'close')) as [number];
      assert.equal(code, 1006, 'cut, without a close frame');
      assert.equal(counters.drops.get('unresponsive'), 1);
    });

    test('a client that stops reading is dropped', async () => {
      // a server of its own that pings rarely: a paused client answers no ping either
      const quiet = new PushCounters();
      const rarePings = await startTestApi({
        store: api.store,
        listen: true,
        push: { limits: { ...LIMITS, pingIntervalMs: 600_000 }, counters: quiet },
      });
      open.push(rarePings);
      // contract deploys of 90 kB each: their mempool events fill the kernel's buffers (a few MB on
      // loopback), then the server's bound
      const code = `;; ${'x'.repeat(90_000)}\n(define-read-only (f) u1)`;
      const deploys = [];
      for (let nonce = 0; nonce < 150; nonce++)
        deploys.push(await deployTx({ from: 'carol', name: `c${nonce}`, code, fee: 5000, nonce }));

      const slow = await rawSocket(rarePings.baseUrl);
      slow.socket.send(rpc(1, 'subscribe', { event: 'mempool' }));
      await waitFor('the subscription', () => slow.messages.length === 1);
      // not reading: its socket is paused, so what is sent piles up in the server's buffers
      (slow.socket as unknown as { _socket: { pause(): void } })._socket.pause();
      for (let i = 0; i < deploys.length && !quiet.drops.get('slow'); i += 10) {
        await rarePings.chain.mempool(deploys.slice(i, i + 10));
      }
      await waitFor('the slow client dropped', () => quiet.drops.get('slow') === 1);
      assert.equal(quiet.connections.get('websocket'), 0);
      assert.equal(quiet.subscriptions.get('mempool'), 0);
      assert.equal(quiet.drops.get('unresponsive'), undefined);
      assert.ok((quiet.messages.get('websocket mempool') ?? 0) > 10);
    });
  });
}

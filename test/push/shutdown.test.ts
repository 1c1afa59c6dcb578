import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import { connectWebSocketClient, StacksApiSocketClient } from '@stacks/blockchain-api-client';
import type { WebSocket } from 'ws';
import { freePort } from '../support/postgres.js';
import { sleep, startServe, type ServeProcess } from '../support/serve-process.js';

// Live-push connections outlive requests: a `serve` told to stop must close them (a WebSocket with 1001,
// going away; socket.io with its server disconnect), or the server would wait on them and never exit.

let serve: ServeProcess | undefined;
after(async () => {
  await serve?.kill('SIGKILL');
});

describe('live push at shutdown', () => {
  test('SIGTERM closes both channels’ connections and serve exits 0 within 5 s', async () => {
    const apiPort = await freePort();
    serve = await startServe({
      databaseUrl: '',
      apiPort,
      observerPort: await freePort(),
      env: { PGLITE_DIR: 'memory://' },
    });
    const ws = await connectWebSocketClient(`ws://127.0.0.1:${apiPort}`);
    await ws.subscribeMempool(() => {});
    const io = new StacksApiSocketClient({
      url: `http://127.0.0.1:${apiPort}`,
      subscriptions: ['mempool'],
      socketOpts: { reconnection: false },
    });
    await once(io.socket as never, 'connect');
    const wsClosed = once(ws.webSocket as WebSocket, 'close');
    const ioGone = new Promise<string>((resolve) => io.socket.once('disconnect', resolve));

    const started = Date.now();
    // a server that waits on its push connections never exits: the test says so instead of hanging
    const exit = await Promise.race([serve.kill('SIGTERM'), sleep(10_000).then(() => 'running after 10 s')]);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(exit, 'exit 0');
    assert.ok(seconds < 5, `exited after ${seconds} s`);
    const [code] = (await wsClosed) as [number];
    assert.equal(code, 1001);
    assert.equal(await ioGone, 'io server disconnect');
  });
});

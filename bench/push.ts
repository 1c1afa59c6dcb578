// Live push under load (src/push), on `serve` (both doors) as a real process:
//
//   - connections held: `idle` WebSocket connections opened to /extended/v1/ws and left idle (they answer
//     the server's pings); the server's resident memory before and after gives the memory per connection;
//   - fan-out: `subscribers` of them subscribe to the mempool; `events` mempool txs are posted to the
//     observer one at a time, and each subscriber's receipt of each tx is timed from the moment its POST
//     left (so the figure holds the commit, the feed's read, the payload's ask and the send), p50/p99/max.
//
// Used by `npm run bench` and by bench/live-push.ts.
import { WebSocket } from 'ws';
import { observerPoster, TestChain, transferTx } from '../test/support/chain.js';
import { freePort } from '../test/support/postgres.js';
import { sleep, startServe } from '../test/support/serve-process.js';

export interface PushResult {
  idle: {
    connections: number;
    openSeconds: number;
    rssMB: { before: number; after: number };
    kbPerConnection: number;
  };
  fanout: {
    subscribers: number;
    events: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    /** the observer's answer to each POST (the message's ingest and commit): what the latency holds of ingest */
    observerMs: { p50: number; max: number };
    /** per event, its first subscriber's receipt, and the time from the first receipt to the last (the fan-out's
     * own spread: one server loop sends to every subscriber, one client loop reads them), p50 over the events */
    firstReceiptMs: { p50: number; max: number };
    spreadMs: { p50: number; max: number };
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Opens `count` WebSocket connections to `url`, `batch` at a time. */
async function openSockets(url: string, count: number, batch = 200): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  while (sockets.length < count) {
    const opening = Array.from({ length: Math.min(batch, count - sockets.length) }, () => {
      const socket = new WebSocket(url);
      return new Promise<WebSocket>((resolve, reject) => {
        socket.once('open', () => resolve(socket));
        socket.once('error', reject);
      });
    });
    sockets.push(...(await Promise.all(opening)));
  }
  return sockets;
}

/** Subscribes a socket to the mempool; resolves on the server's response. */
function subscribeMempool(socket: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer) => {
      const answer = JSON.parse(data.toString()) as { id?: number; error?: { message: string } };
      if (answer.id !== 1) return;
      socket.off('message', onMessage);
      if (answer.error) reject(new Error(answer.error.message));
      else resolve();
    };
    socket.on('message', onMessage);
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscribe', params: { event: 'mempool' } }));
  });
}

/** The figures of one run against a fresh `serve` on `databaseUrl` (an empty PostgreSQL database). */
export async function measurePush(options: {
  databaseUrl: string;
  idle: number;
  subscribers: number;
  events: number;
}): Promise<PushResult> {
  const apiPort = await freePort();
  const observerPort = await freePort();
  const many = String(options.idle + 1000);
  const serve = await startServe({
    databaseUrl: options.databaseUrl,
    apiPort,
    observerPort,
    fileLimit: options.idle + 2000,
    env: {
      LOG_LEVEL: 'warn',
      LOG_REQUESTS: 'false',
      API_MAX_CONNECTIONS: many,
      API_MAX_CONNECTIONS_PER_IP: many,
      PUSH_MAX_CONNECTIONS_PER_IP: many,
    },
  });
  const sockets: WebSocket[] = [];
  try {
    const chain = new TestChain(observerPoster(`http://127.0.0.1:${observerPort}`));
    await chain.block({ txs: [] });
    const txs = [];
    for (let nonce = 0; nonce < options.events; nonce++)
      txs.push(
        await transferTx({ from: 'alice', to: 'ST000000000000000000002AMW42H', amount: 1, fee: 300, nonce }),
      );

    await sleep(1000);
    const rssBefore = serve.rss();
    const opened = performance.now();
    sockets.push(...(await openSockets(`ws://127.0.0.1:${apiPort}/extended/v1/ws`, options.idle)));
    const openSeconds = (performance.now() - opened) / 1000;
    await sleep(2000);
    const rssAfter = serve.rss();

    // the first `subscribers` sockets listen to the mempool; each tx's arrival is timed per socket
    const listening = sockets.slice(0, options.subscribers);
    for (let i = 0; i < listening.length; i += 200)
      await Promise.all(listening.slice(i, i + 200).map(subscribeMempool));
    const latencies: number[] = [];
    const observed: number[] = [];
    const firstReceipts: number[] = [];
    const spreads: number[] = [];
    for (const tx of txs) {
      const eventLatencies: number[] = [];
      const started = performance.now();
      const arrived = listening.map(
        (socket) =>
          new Promise<void>((resolve) => {
            const onMessage = (data: Buffer) => {
              const text = data.toString();
              if (!text.includes(tx.txid)) return;
              eventLatencies.push(performance.now() - started);
              socket.off('message', onMessage);
              resolve();
            };
            socket.on('message', onMessage);
          }),
      );
      await chain.mempool([tx]);
      observed.push(performance.now() - started);
      await Promise.all(arrived);
      latencies.push(...eventLatencies);
      firstReceipts.push(Math.min(...eventLatencies));
      spreads.push(Math.max(...eventLatencies) - Math.min(...eventLatencies));
    }
    for (const figures of [latencies, observed, firstReceipts, spreads]) figures.sort((a, b) => a - b);
    const round = (ms: number) => Math.round(ms * 10) / 10;
    return {
      idle: {
        connections: options.idle,
        openSeconds: round(openSeconds),
        rssMB: { before: Math.round(rssBefore / 2 ** 20), after: Math.round(rssAfter / 2 ** 20) },
        kbPerConnection: round((rssAfter - rssBefore) / 1024 / options.idle),
      },
      fanout: {
        subscribers: listening.length,
        events: txs.length,
        p50Ms: round(percentile(latencies, 50)),
        p99Ms: round(percentile(latencies, 99)),
        maxMs: round(latencies[latencies.length - 1] ?? 0),
        observerMs: {
          p50: round(percentile(observed, 50)),
          max: round(observed[observed.length - 1] ?? 0),
        },
        firstReceiptMs: {
          p50: round(percentile(firstReceipts, 50)),
          max: round(firstReceipts[firstReceipts.length - 1] ?? 0),
        },
        spreadMs: { p50: round(percentile(spreads, 50)), max: round(spreads[spreads.length - 1] ?? 0) },
      },
    };
  } finally {
    for (const socket of sockets) socket.terminate();
    await serve.kill('SIGTERM');
  }
}

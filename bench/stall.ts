// What a large observer message costs the reads of the process ingesting it (F-large-message-worker): `serve`
// (both servers) as a real process; a generated chain's transactions mined in one large block
// (test/support/large-block.ts) are posted to its observer port while two clients ask, one request after
// another (5 ms apart), GET /health and GET /extended/v2/blocks/latest. Reports the slowest answer and the
// p99 of each while the block was in flight, how long the block took, and the process's resident memory
// before and at its peak. Used by `npm run bench` and by bench/observer-stall.ts.
import { largeBlock } from '../test/support/large-block.js';
import { freePort } from '../test/support/postgres.js';
import { sleep, startServe } from '../test/support/serve-process.js';
import { benchChain } from './ingest.js';

export interface StallResult {
  engine: 'postgres' | 'pglite';
  txs: number;
  megabytes: number;
  ingestSeconds: number;
  health: LatencySummary;
  blocksLatest: LatencySummary;
  rssMB: { before: number; peak: number };
}

interface LatencySummary {
  answers: number;
  p99Ms: number;
  maxMs: number;
}

/** Asks `url` one request after another until `until` settles; returns each answer's latency (ms). */
async function poll(url: string, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const latencies: number[] = [];
  while (!done) {
    const started = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    if (res.status !== 200 && res.status !== 404) throw new Error(`${url}: ${res.status}`);
    latencies.push(performance.now() - started);
    await sleep(5);
  }
  return latencies;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

const summary = (latencies: number[]): LatencySummary => ({
  answers: latencies.length,
  p99Ms: Math.round(percentile(latencies, 99)),
  maxMs: Math.round(Math.max(...latencies)),
});

/**
 * One large block posted to a fresh `serve`. `databaseUrl` empty: PGlite in memory; else an empty
 * PostgreSQL database. `txs`: 3,000 gives a 4 MB block, 30,000 a 40 MB one (the chain is generated once into
 * `dir`).
 */
export async function measureStall(options: {
  databaseUrl: string;
  txs: number;
  dir: string;
}): Promise<StallResult> {
  const txsPerBlock = 200;
  const { file } = await benchChain({
    blocks: Math.ceil(options.txs / txsPerBlock) + 1,
    accounts: 2_000,
    txsPerBlock,
    seed: 'stall',
    dir: options.dir,
  });
  const { first, large, txs } = await largeBlock(file);
  const apiPort = await freePort();
  const observerPort = await freePort();
  const serve = await startServe({
    databaseUrl: options.databaseUrl,
    apiPort,
    observerPort,
    env: { PGLITE_DIR: 'memory://', OBSERVER_BODY_LIMIT_MB: '200', LOG_LEVEL: 'warn' },
  });
  try {
    const post = (body: string) =>
      fetch(`http://127.0.0.1:${observerPort}/new_block`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      }).then(async (res) => {
        const text = await res.text();
        if (res.status !== 200) throw new Error(`observer answered ${res.status}: ${text.slice(0, 300)}`);
        return text;
      });
    await post(first);
    await sleep(500);
    const rssBefore = serve.rss();
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, serve.rss())), 20);
    const started = performance.now();
    const ingest = post(large).then(() => performance.now() - started);
    const [health, latest, ingestMs] = await Promise.all([
      poll(`http://127.0.0.1:${apiPort}/health`, ingest),
      poll(`http://127.0.0.1:${apiPort}/extended/v2/blocks/latest`, ingest),
      ingest,
    ]);
    clearInterval(sampler);
    return {
      engine: options.databaseUrl ? 'postgres' : 'pglite',
      txs,
      megabytes: Math.round((large.length / 1e6) * 10) / 10,
      ingestSeconds: Math.round(ingestMs) / 1000,
      health: summary(health),
      blocksLatest: summary(latest),
      rssMB: { before: Math.round(rssBefore / 2 ** 20), peak: Math.round(rssPeak / 2 ** 20) },
    };
  } finally {
    await serve.kill('SIGTERM');
  }
}

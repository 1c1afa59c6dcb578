// What a large observer message costs the reads of the process ingesting it: `serve` (both doors) as a real
// process; a generated chain's transactions mined in one large block (test/support/large-block.ts) are
// posted to its observer port while two clients ask, one request after another, GET /health and
// GET /extended/v2/blocks/latest. Reports the slowest answer of each while the block was in flight, how long
// the block took, and the process's resident memory before and at its peak.
//
//   npx tsx bench/observer-stall.ts [--engine postgres|pglite] [--txs 3000]
//
// --txs 3000 gives a 4 MB block, --txs 30000 a 40 MB one (the chain is generated once into bench/out/).
import { parseArgs } from 'node:util';
import { largeBlock } from '../test/support/large-block.js';
import { freePort, startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { sleep, startServe } from '../test/support/serve-process.js';
import { benchChain } from './ingest.js';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'postgres' },
    txs: { type: 'string', default: '3000' },
  },
});
const engine = values.engine;
if (engine !== 'postgres' && engine !== 'pglite') throw new Error('--engine is postgres or pglite');
const txsPerBlock = 200;
const { file } = await benchChain({
  blocks: Math.ceil(Number(values.txs) / txsPerBlock) + 1,
  accounts: 2_000,
  txsPerBlock,
  seed: 'stall',
  dir: 'bench/out',
});
const { first, large, txs } = await largeBlock(file);

/** Asks `url` one request after another until `until` resolves; returns each answer's latency (ms). */
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

let postgres: TestPostgres | undefined;
try {
  let databaseUrl = '';
  if (engine === 'postgres') {
    postgres = await startPostgres();
    databaseUrl = await postgres.createDatabase('stall');
  }
  const apiPort = await freePort();
  const observerPort = await freePort();
  const serve = await startServe({
    databaseUrl,
    apiPort,
    observerPort,
    env: { PGLITE_DIR: 'memory://', OBSERVER_BODY_LIMIT_MB: '200' },
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
    const summary = (latencies: number[]) => ({
      answers: latencies.length,
      p99Ms: Math.round(percentile(latencies, 99)),
      maxMs: Math.round(Math.max(...latencies)),
    });
    console.log(
      JSON.stringify({
        engine,
        txs,
        megabytes: Math.round((large.length / 1e6) * 10) / 10,
        ingestSeconds: Math.round(ingestMs) / 1000,
        health: summary(health),
        blocksLatest: summary(latest),
        rssMB: { before: Math.round(rssBefore / 2 ** 20), peak: Math.round(rssPeak / 2 ** 20) },
      }),
    );
  } finally {
    await serve.kill('SIGTERM');
  }
} finally {
  await postgres?.stop();
}

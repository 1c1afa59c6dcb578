// Mempool statistics, fee priorities and contract status over a 100,000-tx pending mempool on a throwaway
// PostgreSQL: cold computation of the aggregates, HTTP latency (sequential and concurrent, keep-alive) with
// the mempool unchanged, and with the mempool changing every CHURN_MS while clients keep asking.
//
//   npx tsx bench/mempool.ts            (PENDING=100000 PRUNED=100000 REQUESTS=2000 CONCURRENCY=8 CHURN_MS=1000)
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { buildApiServer } from '../src/api/server.js';
import { openDatabase } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { computeMempoolAggregates } from '../src/store/read/mempool.js';
import { Store } from '../src/store/store.js';
import { touchMempool } from '../src/store/write/tip.js';
import { startPostgres } from '../test/support/postgres.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const PENDING = env('PENDING', 100_000);
const PRUNED = env('PRUNED', 100_000);
const REQUESTS = env('REQUESTS', 2000);
const CONCURRENCY = env('CONCURRENCY', 8);
const CHURN_MS = env('CHURN_MS', 1000);
const CHURN_SECONDS = env('CHURN_SECONDS', 10);
const TIP = 150_000;
const DEPLOYER = 'SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7';

/** A result row: latency percentiles, and the throughput when the wall time of the run is given. */
function row(name: string, concurrency: number, samples: number[], elapsedMs?: number) {
  const s = summary(samples);
  const rate = elapsedMs ? Math.round(samples.length / (elapsedMs / 1000)).toLocaleString('en-US') : '–';
  return `| ${name} | ${concurrency} | ${s.n} | ${s.p50} | ${s.p95} | ${s.p99} | ${s.max} | ${rate} |`;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await fn();
  return [value, performance.now() - started];
}

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  const ms = (v: number) => v.toFixed(2);
  return { n: sorted.length, p50: ms(at(0.5)), p95: ms(at(0.95)), p99: ms(at(0.99)), max: ms(at(1)) };
}

/** Made-up mempool rows: the read side only looks at type, fee, receipt height, size, pruned and deploy id. */
async function fillMempool(store: Store) {
  const sql = store.sql;
  const insert = (from: number, to: number, pruned: boolean) =>
    sql.unsafe(`
      INSERT INTO mempool_txs (tx_id, pruned, status, receipt_time, receipt_block_height, type_id, nonce,
        fee_rate, sender_address, sponsored, anchor_mode, post_condition_mode, post_conditions, payload,
        smart_contract_contract_id, raw_tx, tx_size)
      SELECT '0x' || lpad(to_hex(i), 64, '0'), ${pruned}, ${pruned ? -10 : 0}, 1700000000 + i,
        ${TIP} - (i % 250), t.type_id, i / 7000, (180 + floor(random() * random() * 2000000))::numeric,
        'SP' || (i % 7000), false, 3, 1, '[]', '{}',
        CASE WHEN t.type_id IN (1, 6) THEN '${DEPLOYER}.contract-' || i END, '0x00',
        CASE t.type_id WHEN 0 THEN 180 WHEN 2 THEN 150 + (i % 1400) WHEN 1 THEN 300 + (i % 20000)
          WHEN 6 THEN 300 + (i % 20000) ELSE 200 + (i % 100) END
      FROM generate_series(${from}, ${to}) i
      CROSS JOIN LATERAL (SELECT (ARRAY[0,0,0,0,0,2,2,2,1,6,4,7,3,0,2,0,2,0,2,0])[1 + i % 20] AS type_id) t`);
  const started = performance.now();
  for (let from = 1; from <= PENDING; from += 50_000)
    await insert(from, Math.min(PENDING, from + 49_999), false);
  for (let from = PENDING + 1; from <= PENDING + PRUNED; from += 50_000) {
    await insert(from, Math.min(PENDING + PRUNED, from + 49_999), true);
  }
  await sql`
    UPDATE chain_tip SET block_height = ${TIP}, index_block_hash = ${'0x' + 'ab'.repeat(32)},
      block_hash = ${'0x' + 'cd'.repeat(32)}, mempool_version = mempool_version + 1, mempool_updated_at = now()`;
  await sql`VACUUM ANALYZE mempool_txs`;
  return performance.now() - started;
}

// The HTTP client runs in a worker thread (plain JS: no TypeScript loader needed there), so it does not share
// the server's event loop: each sample is one request's latency as a separate client process would see it.
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const { urls, total, durationMs, concurrency } = workerData;
const samples = [];
let next = 0;
const end = durationMs ? performance.now() + durationMs : Infinity;
async function one(url) {
  const started = performance.now();
  const res = await fetch(url);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(url + ': HTTP ' + res.status);
  samples.push(performance.now() - started);
}
Promise.all(Array.from({ length: concurrency }, async () => {
  while (next < total && performance.now() < end) await one(urls[next++ % urls.length]);
})).then(() => parentPort.postMessage(samples), (err) => parentPort.postMessage({ error: String(err) }));
`;

/** Latencies (ms) of `total` requests (or as many as fit in `durationMs`) over `urls`, `concurrency` at a time. */
function load(urls: string[], options: { total?: number; durationMs?: number; concurrency: number }) {
  return new Promise<number[]>((resolve, reject) => {
    const worker = new Worker(CLIENT, {
      eval: true,
      workerData: { urls, total: options.total ?? Infinity, durationMs: options.durationMs, ...options },
    });
    worker.once('message', (result: number[] | { error: string }) => {
      void worker.terminate();
      if (Array.isArray(result)) resolve(result);
      else reject(new Error(result.error));
    });
    worker.once('error', reject);
  });
}

const logger = pino({ level: 'silent' });
const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
console.log(`${cpus().length} CPUs (${cpus()[0]?.model}), load average at start: ${loadAverage()}`);
const pg = await startPostgres();
let store: Store | undefined;
try {
  const db = await openDatabase({
    url: await pg.createDatabase('bench_mempool'),
    pgliteDir: '',
    poolMax: 10,
  });
  store = new Store(db);
  await migrate(store.sql);
  const fillMs = await fillMempool(store);
  const [{ pending }] = await store.sql<{ pending: number }[]>`
    SELECT count(*)::int AS pending FROM mempool_txs WHERE NOT pruned`;
  console.log(
    `mempool: ${pending} pending + ${PRUNED} pruned rows (filled in ${(fillMs / 1000).toFixed(1)} s)`,
  );

  const cold: number[] = [];
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    await computeMempoolAggregates(store.sql);
    cold.push(performance.now() - started);
  }
  console.log('cold aggregate computation (one SQL statement, ms):', summary(cold));

  const app = await buildApiServer({ store, logger, apiVersion: 'bench' });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const ids = (n: number, from: number) =>
    Array.from({ length: n }, (_, i) => `contract_id=${DEPLOYER}.contract-${from + i * 20}`).join('&');
  const endpoints: Record<string, string> = {
    stats: `${base}/extended/v1/tx/mempool/stats`,
    fees: `${base}/extended/v2/mempool/fees`,
    'contract status (1 id)': `${base}/extended/v2/smart-contracts/status?${ids(1, 8)}`,
    'contract status (50 ids)': `${base}/extended/v2/smart-contracts/status?${ids(50, 9)}`,
  };
  // warm up: connections, prepared statements, and the first computation of the aggregates
  for (const url of Object.values(endpoints)) await load([url], { total: 50, concurrency: 1 });

  const rows: string[] = [];
  for (const [name, url] of Object.entries(endpoints)) {
    for (const concurrency of [1, CONCURRENCY]) {
      const [samples, elapsed] = await timed(() => load([url], { total: REQUESTS, concurrency }));
      rows.push(row(name, concurrency, samples, elapsed));
    }
  }

  const injectSamples: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    await app.inject({
      method: 'GET',
      url: i % 2 ? '/extended/v2/mempool/fees' : '/extended/v1/tx/mempool/stats',
    });
    injectSamples.push(performance.now() - started);
  }
  rows.push(row('stats+fees via inject (no socket)', 1, injectSamples));

  // Churn: a writer changes the mempool (one pending tx more, version bumped in the same transaction, as
  // ingest does) every CHURN_MS while clients keep asking; the first request after each change recomputes.
  let stop = false;
  let changes = 0;
  const writer = (async () => {
    let i = PENDING + PRUNED;
    while (!stop) {
      await new Promise((resolve) => setTimeout(resolve, CHURN_MS));
      i++;
      await store!.transaction(async (sql) => {
        await sql`
          INSERT INTO mempool_txs (tx_id, pruned, status, receipt_time, receipt_block_height, type_id, nonce,
            fee_rate, sender_address, sponsored, anchor_mode, post_condition_mode, post_conditions, payload,
            raw_tx, tx_size)
          VALUES (${'0x' + i.toString(16).padStart(64, '0')}, false, 0, 1700000000, ${TIP}, 0, 0, 500,
            'SPCHURN', false, 3, 1, '[]', '{}', '0x00', 180)`;
        await touchMempool(sql, new Date());
      });
      changes++;
    }
  })();
  const [churnSamples, churnElapsed] = await timed(() =>
    load([endpoints.stats, endpoints.fees], { durationMs: CHURN_SECONDS * 1000, concurrency: CONCURRENCY }),
  );
  stop = true;
  await writer;
  rows.push(
    row(
      `stats+fees, mempool changing every ${CHURN_MS} ms (${changes} changes)`,
      CONCURRENCY,
      churnSamples,
      churnElapsed,
    ),
  );

  console.log('\n| endpoint | concurrency | requests | p50 ms | p95 ms | p99 ms | max ms | req/s |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  console.log(rows.join('\n'));
  console.log(`\nload average at end: ${loadAverage()}`);
  await app.close();
} finally {
  await store?.close();
  await pg.stop();
}

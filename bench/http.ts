// The HTTP part of the benchmark suite (bench/run.ts): the read API and the bare-lookup ceiling, each in
// its own process (as deployed: the load generator must not share the server's event loop), loaded by
// autocannon with realistic inputs picked from the database: hot and cold ids, busy and quiet principals,
// deep offsets.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { Sql } from '../src/store/db.js';
import { freePort } from '../test/support/postgres.js';
import { processTreeCpuSeconds } from './ingest.js';

/** The checkout whose code the servers run, unless told another (bench/compare.ts runs two). */
const ownCheckout = join(import.meta.dirname, '..');

export interface Server {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the read API (`serve --read-only`, as deployed) or the ceiling server on `databaseUrl`, and waits
 * until it answers. Rate limiting is off (the original API has none in-process); everything else is the
 * default configuration, DB_POOL_MAX included. `checkout` is the working tree whose code runs (this one
 * unless told).
 */
export async function startServer(
  kind: 'api' | 'ceiling',
  databaseUrl: string,
  checkout = ownCheckout,
): Promise<Server> {
  const port = await freePort();
  // metrics stay on (the default, and a per-request cost) on a port of their own: two APIs run side by side
  // in bench/compare.ts, and other processes on this machine may hold the default one
  const metricsPort = await freePort();
  const script = kind === 'api' ? ['src/cli/main.ts', 'serve', '--read-only'] : ['bench/ceiling-server.ts'];
  // BENCH_SERVER_NODE_OPTIONS: extra node flags for the servers, e.g. `--cpu-prof --cpu-prof-dir=bench/out/prof`
  const nodeFlags = process.env.BENCH_SERVER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [];
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', ...script], {
    cwd: checkout,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      API_HOST: '127.0.0.1',
      API_PORT: String(port),
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_ENABLED: 'false',
      NODE_ENV: 'production',
    },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const probe = kind === 'api' ? '/extended/v2/mempool/fees' : '/ceiling/block/0x00';
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${kind} server exited with code ${child.exitCode}`);
    try {
      const res = await fetch(base + probe);
      await res.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${kind} server did not answer within 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return {
    base,
    pid: child.pid ?? 0,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/**
 * What a case must reach: a share of the bare-Fastify ceiling's req/s measured in the same run, a
 * number of req/s, a p99. A case without a target is measured for the record.
 */
export interface Target {
  shareOfBare?: number;
  reqPerSec?: number;
  p99Ms?: number;
}

/** Single objects: half of what Fastify alone serves. */
const SINGLE_OBJECT: Target = { shareOfBare: 0.5 };

/** One load: a name, the endpoint it exercises, and the paths requested in turn (shared by all connections). */
export interface HttpCase {
  name: string;
  endpoint: string;
  target?: Target;
  paths: string[];
}

export interface HttpResult {
  name: string;
  endpoint: string;
  target?: Target;
  requests: number;
  reqPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number; mean: number; max: number };
  bytesPerResponse: number;
  non2xx: number;
  errors: number;
  /** CPU seconds used during the load by the API process and by PostgreSQL */
  cpuSeconds: { server: number; postgres: number };
}

/** What the cases pick from: read from the indexed chain. */
export interface HttpInputs {
  tipHeight: number;
  hotTx: string;
  coldTxs: string[];
  blockHashes: string[];
  heights: number[];
  burnHeights: number[];
  busy: { principal: string; txCount: number };
  quiet: string[];
  busyTxs: string[];
  contracts: string[];
}

/**
 * Cold id sets hold more ids than any cache of the API keeps (the kept tx renderings are 10,000 entries), so a
 * cold case measures reads from the database, not from a cache: every canonical tx and block up to this many.
 * (A chain smaller than a cache cannot have a cold set larger than it: there the case reads each id once per
 * pass over the whole chain.)
 */
const COLD_SET = 40_000;

/** Picks realistic inputs from the database (uniform samples over the whole history). */
export async function selectInputs(sql: Sql): Promise<HttpInputs> {
  const [tip] = await sql<{ block_height: number }[]>`SELECT block_height FROM chain_tip`;
  const [hot] = await sql<{ tx_id: string }[]>`
    SELECT tx_id FROM txs WHERE canonical AND microblock_canonical AND block_height = ${tip.block_height}
    ORDER BY tx_index DESC LIMIT 1`;
  const coldTxs = await sql<{ tx_id: string }[]>`
    SELECT tx_id FROM txs WHERE canonical AND microblock_canonical AND index_block_hash <> ''
    ORDER BY random() LIMIT ${COLD_SET}`;
  const blocks = await sql<{ index_block_hash: string; block_height: number }[]>`
    SELECT index_block_hash, block_height FROM blocks WHERE canonical ORDER BY random() LIMIT ${COLD_SET}`;
  const burn = await sql<{ burn_block_height: number }[]>`
    SELECT DISTINCT burn_block_height FROM blocks WHERE canonical ORDER BY 1`;
  // the busiest account (a standard principal, as a wallet or exchange is) and accounts with a few txs
  const [busy] = await sql<{ principal: string; tx_count: number }[]>`
    SELECT principal, tx_count FROM principal_stats WHERE position('.' IN principal) = 0
    ORDER BY tx_count DESC LIMIT 1`;
  const quiet = await sql<{ principal: string }[]>`
    SELECT principal FROM principal_stats WHERE tx_count BETWEEN 1 AND 3 AND position('.' IN principal) = 0
    ORDER BY random() LIMIT 1000`;
  // cold as the others: up to COLD_SET of its txs, more than the answers and renderings kept (the 1M chain's
  // busiest account has ~195,000; the small chain's 2,056 are all of them)
  const busyTxs = await sql<{ tx_id: string }[]>`
    SELECT tx_id FROM principal_txs WHERE principal = ${busy.principal} AND ordinal IS NOT NULL
    ORDER BY random() LIMIT ${COLD_SET}`;
  const contracts = await sql<{ contract_id: string }[]>`
    SELECT DISTINCT contract_id FROM smart_contracts WHERE canonical ORDER BY 1`;
  return {
    tipHeight: tip.block_height,
    hotTx: hot.tx_id,
    coldTxs: coldTxs.map((r) => r.tx_id),
    blockHashes: blocks.map((r) => r.index_block_hash),
    heights: blocks.map((r) => r.block_height),
    burnHeights: burn.map((r) => r.burn_block_height),
    busy: { principal: busy.principal, txCount: Number(busy.tx_count) },
    // a small chain may have no account that quiet: then the least busy ones
    quiet: quiet.length > 0 ? quiet.map((r) => r.principal) : await leastBusy(sql),
    busyTxs: busyTxs.map((r) => r.tx_id),
    contracts: contracts.map((r) => r.contract_id),
  };
}

async function leastBusy(sql: Sql): Promise<string[]> {
  const rows = await sql<{ principal: string }[]>`
    SELECT principal FROM principal_stats WHERE tx_count > 0 AND position('.' IN principal) = 0
    ORDER BY tx_count LIMIT 200`;
  return rows.map((r) => r.principal);
}

/** Groups of `size` consecutive items, cycling through the list. */
function groups<T>(items: T[], size: number, count: number): T[][] {
  return Array.from({ length: count }, (_, i) =>
    Array.from({ length: size }, (_, j) => items[(i * size + j) % items.length]),
  );
}

/** The `endpoint` of the two ceiling cases (served by bench/ceiling-server.ts, not by the API). */
export const BARE_CEILING = 'ceiling: bare';
export const LOOKUP_CEILING = 'ceiling: lookup';

/** The cases of one run: every endpoint of the contract with its target, and the two ceilings (first). */
export function httpCases(inputs: HttpInputs): HttpCase[] {
  const deepOffset = Math.max(0, Math.floor(inputs.busy.txCount * 0.9) - 50);
  const busy = inputs.busy.principal;
  const busyCount = inputs.busy.txCount.toLocaleString('en-US');
  const lists: Target = { reqPerSec: 5000 };
  const balances: Target = { shareOfBare: 0.25 };
  return [
    { name: 'ceiling: bare Fastify route, no database', endpoint: BARE_CEILING, paths: ['/ceiling/bare'] },
    {
      name: 'ceiling: bare primary-key lookup',
      endpoint: LOOKUP_CEILING,
      paths: inputs.blockHashes.map((h) => `/ceiling/block/${h}`),
    },
    {
      name: 'tx by id, hot (newest tx)',
      endpoint: 'GET /extended/v1/tx/:tx_id',
      target: SINGLE_OBJECT,
      paths: [`/extended/v1/tx/${inputs.hotTx}`],
    },
    {
      name: `tx by id, cold (${inputs.coldTxs.length.toLocaleString('en-US')} ids over the history)`,
      endpoint: 'GET /extended/v1/tx/:tx_id',
      target: SINGLE_OBJECT,
      paths: inputs.coldTxs.map((id) => `/extended/v1/tx/${id}`),
    },
    {
      name: 'tx/multiple, 10 cold ids',
      endpoint: 'GET /extended/v1/tx/multiple',
      paths: groups(inputs.coldTxs, 10, Math.ceil(inputs.coldTxs.length / 10)).map(
        (ids) => `/extended/v1/tx/multiple?${ids.map((id) => `tx_id=${id}`).join('&')}`,
      ),
    },
    {
      name: 'block, latest',
      endpoint: 'GET /extended/v2/blocks/:height_or_hash',
      target: SINGLE_OBJECT,
      paths: ['/extended/v2/blocks/latest'],
    },
    {
      name: 'block by height, hot (tip)',
      endpoint: 'GET /extended/v2/blocks/:height_or_hash',
      target: SINGLE_OBJECT,
      paths: [`/extended/v2/blocks/${inputs.tipHeight}`],
    },
    {
      name: `block by height or hash, cold (${inputs.heights.length.toLocaleString('en-US')} blocks)`,
      endpoint: 'GET /extended/v2/blocks/:height_or_hash',
      target: SINGLE_OBJECT,
      paths: inputs.heights.map((h, i) => `/extended/v2/blocks/${i % 2 === 0 ? h : inputs.blockHashes[i]}`),
    },
    {
      name: 'block by burn block height (all)',
      endpoint: 'GET /extended/v1/block/by_burn_block_height/:h',
      target: { shareOfBare: 0.25, p99Ms: 20 },
      paths: inputs.burnHeights.map((h) => `/extended/v1/block/by_burn_block_height/${h}`),
    },
    {
      name: `balances, busiest account (${busyCount} txs)`,
      endpoint: 'GET /extended/v1/address/:principal/balances',
      target: balances,
      paths: [`/extended/v1/address/${busy}/balances`],
    },
    {
      name: BALANCES_QUIET,
      endpoint: 'GET /extended/v1/address/:principal/balances',
      target: balances,
      paths: inputs.quiet.map((p) => `/extended/v1/address/${p}/balances`),
    },
    {
      name: 'transactions_with_transfers limit 50, busiest, offset 0',
      endpoint: 'GET /extended/v1/address/:principal/transactions_with_transfers',
      target: lists,
      paths: [`/extended/v1/address/${busy}/transactions_with_transfers?limit=50`],
    },
    {
      name: `transactions_with_transfers limit 50, busiest, deep offset (${deepOffset.toLocaleString('en-US')})`,
      endpoint: 'GET /extended/v1/address/:principal/transactions_with_transfers',
      target: lists,
      paths: [`/extended/v1/address/${busy}/transactions_with_transfers?limit=50&offset=${deepOffset}`],
    },
    {
      name: 'transactions_with_transfers limit 50, quiet accounts',
      endpoint: 'GET /extended/v1/address/:principal/transactions_with_transfers',
      target: lists,
      paths: inputs.quiet.map((p) => `/extended/v1/address/${p}/transactions_with_transfers?limit=50`),
    },
    {
      name: `tx with transfers, busiest account, cold txs (${inputs.busyTxs.length.toLocaleString('en-US')} of its txs)`,
      endpoint: 'GET /extended/v1/address/:principal/:tx_id/with_transfers',
      target: SINGLE_OBJECT,
      paths: inputs.busyTxs.map((id) => `/extended/v1/address/${busy}/${id}/with_transfers`),
    },
    {
      name: 'smart-contracts/status, 1 id',
      endpoint: 'GET /extended/v2/smart-contracts/status',
      target: SINGLE_OBJECT,
      paths: inputs.contracts.map((id) => `/extended/v2/smart-contracts/status?contract_id=${id}`),
    },
    {
      name: 'smart-contracts/status, 5 ids',
      endpoint: 'GET /extended/v2/smart-contracts/status',
      target: SINGLE_OBJECT,
      paths: groups(inputs.contracts, 5, 100).map(
        (ids) => `/extended/v2/smart-contracts/status?${ids.map((id) => `contract_id=${id}`).join('&')}`,
      ),
    },
    {
      name: 'mempool stats',
      endpoint: 'GET /extended/v1/tx/mempool/stats',
      target: SINGLE_OBJECT,
      paths: ['/extended/v1/tx/mempool/stats'],
    },
    {
      name: 'mempool fees',
      endpoint: 'GET /extended/v2/mempool/fees',
      target: SINGLE_OBJECT,
      paths: ['/extended/v2/mempool/fees'],
    },
  ];
}

/** The quiet accounts' balances case: a busy principal's balances must be within 2x of its latency. */
export const BALANCES_QUIET = 'balances, quiet accounts (1-3 txs)';

/**
 * Loads `base` with the case's paths, in turn across all connections, for `seconds` after a short warm-up
 * (JIT, prepared statements, caches), and reports throughput, latency and the CPU the server and PostgreSQL
 * used meanwhile.
 */
export async function runCase(
  base: string,
  c: HttpCase,
  options: {
    seconds: number;
    warmupSeconds: number;
    connections: number;
    serverPid: number;
    /** PostgreSQL's postmaster: the CPU of its whole process tree is counted... */
    pgPid: number;
    /** ...unless this says what to count instead (a shared cluster: the API's own backends) */
    pgCpuSeconds?: () => number;
  },
): Promise<HttpResult> {
  const pgCpuSeconds = options.pgCpuSeconds ?? (() => processTreeCpuSeconds(options.pgPid));
  // every path must answer 200 before it is measured
  for (const path of new Set([c.paths[0], c.paths[c.paths.length - 1]])) {
    const res = await fetch(base + path);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${c.name}: ${path} answered ${res.status}`);
  }
  const load = (duration: number) => {
    let next = 0;
    return autocannon({
      url: base,
      connections: options.connections,
      duration,
      requests: [
        {
          method: 'GET',
          setupRequest: (request) => ({ ...request, path: c.paths[next++ % c.paths.length] }),
        },
      ],
    });
  };
  if (options.warmupSeconds > 0) await load(options.warmupSeconds);
  const server0 = processTreeCpuSeconds(options.serverPid);
  const pg0 = pgCpuSeconds();
  const r = await load(options.seconds);
  const server = processTreeCpuSeconds(options.serverPid) - server0;
  const postgres = pgCpuSeconds() - pg0;
  const requests = r.requests.total;
  return {
    name: c.name,
    endpoint: c.endpoint,
    target: c.target,
    requests,
    reqPerSec: Math.round(requests / r.duration),
    latencyMs: {
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      mean: Math.round(r.latency.mean * 100) / 100,
      max: r.latency.max,
    },
    bytesPerResponse: requests > 0 ? Math.round(r.throughput.total / requests) : 0,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    cpuSeconds: { server: Math.round(server * 100) / 100, postgres: Math.round(postgres * 100) / 100 },
  };
}

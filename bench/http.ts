// The HTTP part of the benchmark suite (bench/run.ts): the read API and the bare-lookup ceiling, each in
// its own process (as deployed: the load generator must not share the server's event loop), loaded by
// autocannon with realistic inputs picked from the database: hot and cold ids, busy and quiet principals,
// deep offsets.
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
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
  env: Record<string, string> = {},
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
      ...env,
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

/**
 * Which set a case belongs to: the two ceilings, the ten endpoints of the first contract, or the routes added
 * beyond them (issue 31), which `npm run bench -- --only beyond` runs beside the ceilings alone.
 */
export type CaseFamily = 'ceiling' | 'ten' | 'beyond';

/** One load: a name, the endpoint it exercises, and the paths requested in turn (shared by all connections). */
export interface HttpCase {
  name: string;
  /**
   * The same case on every chain (a name may carry a chain's own counts): how a small-chain result is set
   * beside the large chain's, for the growth with history size. The name when absent.
   */
  key?: string;
  family?: CaseFamily;
  endpoint: string;
  target?: Target;
  paths: string[];
  /**
   * Served by an API that keeps no answers (`RENDERED_ENV`): what reading and rendering each request costs,
   * whatever the walk's size beside the caches'.
   */
  rendered?: boolean;
  /**
   * Why the case is not set beside the other chain's for the growth with history size (the two measure
   * different things, e.g. a kept answer on one and a rendered one on the other); compared when absent.
   */
  notCompared?: string;
}

/** The environment of the API serving the `rendered` cases: no answer nor rendering kept (docs/caching.md). */
export const RENDERED_ENV = { CACHE_MAX_MB: '0' };

export interface HttpResult {
  name: string;
  key: string;
  family: CaseFamily;
  notCompared?: string;
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
  /** the machine's 1-minute load average when the case ended (it is shared: other work moves the figures) */
  loadAverage?: number;
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
  /** principals of about the median tx count (a wallet, where the busiest is an exchange), and that median */
  typical: { txCount: number; principals: string[] };
  /** (principal, tx) pairs of the typical principals' txs, over the history */
  typicalTxs: { principal: string; txId: string }[];
  /** principals with more than a 50-tx page (FULL_PAGE_TXS txs or more), and their tx counts */
  fullPages: { principal: string; txCount: number }[];
  burnHashes: string[];
  /** block hashes (search finds a block by its hash, not its index block hash) */
  searchBlockHashes: string[];
  /** heights of blocks with at least BLOCK_TXS_DEEP + 50 txs: a deep page of a block's txs */
  fullBlocks: number[];
  /** a block a tenth of the way up the chain (a page above the genesis at least): a deep page's cursor */
  deepBlock: { indexBlockHash: string; height: number };
  canonicalTxs: number;
  contractCalls: number;
  /** the mempool's pending txs, its busiest sender and other senders */
  mempool: { pending: number; busySender: string; senders: string[] };
  /** the principal holding the most NFTs, how many, and other holders */
  nft: { busy: { principal: string; held: number }; holders: string[] };
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
  const beyond = await selectBeyondInputs(sql, busy.principal);
  return {
    ...beyond,
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

/** The inputs of the routes beyond the ten. */
async function selectBeyondInputs(
  sql: Sql,
  busiest: string,
): Promise<
  Pick<
    HttpInputs,
    | 'typical'
    | 'typicalTxs'
    | 'fullPages'
    | 'burnHashes'
    | 'fullBlocks'
    | 'searchBlockHashes'
    | 'deepBlock'
    | 'canonicalTxs'
    | 'contractCalls'
    | 'mempool'
    | 'nft'
  >
> {
  const [{ median }] = await sql<{ median: number }[]>`
    SELECT coalesce(percentile_disc(0.5) WITHIN GROUP (ORDER BY tx_count), 1)::int AS median
    FROM principal_stats WHERE tx_count > 0 AND position('.' IN principal) = 0`;
  // from the median to 1.5 times it, so one deep offset (90% of the median) is inside every one's list
  const typical = await sql<{ principal: string }[]>`
    SELECT principal FROM principal_stats
    WHERE tx_count BETWEEN ${median} AND ${Math.ceil(median * 1.5)} AND position('.' IN principal) = 0
      AND principal <> ${busiest}
    ORDER BY random() LIMIT 1000`;
  // a small chain may have none in that band: then the busiest stands in
  const principals = typical.length > 0 ? typical.map((r) => r.principal) : [busiest];
  const typicalTxs = await sql<{ principal: string; tx_id: string }[]>`
    SELECT principal, tx_id FROM principal_txs
    WHERE principal = ANY(${principals.slice(0, 200)}) AND ordinal IS NOT NULL
    ORDER BY random() LIMIT ${COLD_SET}`;
  const fullPages = await sql<{ principal: string; tx_count: number }[]>`
    SELECT principal, tx_count FROM principal_stats
    WHERE tx_count >= ${FULL_PAGE_TXS} AND position('.' IN principal) = 0
    ORDER BY random() LIMIT 1000`;
  const burnHashes = await sql<{ burn_block_hash: string }[]>`
    SELECT DISTINCT burn_block_hash FROM blocks WHERE canonical ORDER BY 1`;
  const searchBlockHashes = await sql<{ block_hash: string }[]>`
    SELECT block_hash FROM blocks WHERE canonical ORDER BY random() LIMIT 1000`;
  const fullBlocks = await sql<{ block_height: number }[]>`
    SELECT block_height FROM blocks WHERE canonical AND tx_count >= ${BLOCK_TXS_DEEP + 50}
    ORDER BY random() LIMIT ${COLD_SET}`;
  const [deep] = await sql<{ index_block_hash: string; block_height: number }[]>`
    SELECT index_block_hash, block_height FROM blocks
    WHERE canonical AND block_height >= greatest((SELECT block_height / 10 FROM chain_tip), ${BLOCK_PAGE})
    ORDER BY block_height LIMIT 1`;
  const [counts] = await sql<{ txs: number; calls: number }[]>`
    SELECT count(*)::int AS txs, (count(*) FILTER (WHERE type_id = 2))::int AS calls
    FROM txs WHERE canonical AND microblock_canonical AND index_block_hash <> ''`;
  const senders = await sql<{ sender_address: string; pending: number }[]>`
    SELECT sender_address, count(*)::int AS pending FROM mempool_txs WHERE NOT pruned
    GROUP BY sender_address ORDER BY 2 DESC, 1`;
  const holders = await sql<{ owner: string; held: number }[]>`
    SELECT owner, count(*)::int AS held FROM nft_custody WHERE position('.' IN owner) = 0
    GROUP BY owner ORDER BY 2 DESC, 1`;
  return {
    typical: { txCount: median, principals },
    typicalTxs: typicalTxs.map((r) => ({ principal: r.principal, txId: r.tx_id })),
    fullPages: fullPages.map((r) => ({ principal: r.principal, txCount: Number(r.tx_count) })),
    burnHashes: burnHashes.map((r) => r.burn_block_hash),
    fullBlocks: fullBlocks.map((r) => r.block_height),
    searchBlockHashes: searchBlockHashes.map((r) => r.block_hash),
    deepBlock: { indexBlockHash: deep.index_block_hash, height: deep.block_height },
    canonicalTxs: counts.txs,
    contractCalls: counts.calls,
    mempool: {
      pending: senders.reduce((n, r) => n + r.pending, 0),
      busySender: senders[0]?.sender_address ?? busiest,
      senders: senders.length > 1 ? senders.slice(1, 1001).map((r) => r.sender_address) : principals,
    },
    nft: {
      busy: { principal: holders[0]?.owner ?? busiest, held: holders[0]?.held ?? 0 },
      holders: holders.length > 1 ? holders.slice(1, 1001).map((r) => r.owner) : principals,
    },
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

/**
 * The cases of one run: the two ceilings (first), every endpoint of the first contract with its target, and
 * the routes beyond it.
 */
export function httpCases(inputs: HttpInputs): HttpCase[] {
  const [bare, lookup, ...ten] = tenCases(inputs);
  return [
    { ...bare, family: 'ceiling' },
    { ...lookup, family: 'ceiling' },
    ...ten.map((c): HttpCase => ({ ...c, family: 'ten' })),
    ...beyondCases(inputs).map((c): HttpCase => ({ ...c, family: 'beyond' })),
  ];
}

function tenCases(inputs: HttpInputs): HttpCase[] {
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

/** The page size of the block lists' cases (their maximum). */
const BLOCK_PAGE = 30;

/** The offset of a deep page of a block's txs (the bench chains' blocks hold ~200). */
const BLOCK_TXS_DEEP = 100;

/** The fewest txs of a principal whose 50-tx pages the `full pages` case walks (a page at any offset is full). */
const FULL_PAGE_TXS = 60;

/** How many pages the `full pages` case walks: (principal, offset) pairs over every principal chosen. */
const FULL_PAGES_WALK = 2000;

/** A tenth of the way from the end of a list of `total` items: a deep page of size `limit`. */
const deepPageOffset = (total: number, limit: number) => Math.max(0, Math.floor(total * 0.9) - limit);
const count = (n: number) => n.toLocaleString('en-US');

/**
 * The routes beyond the ten (issue 31), measured as the ten are: the busiest principal and typical ones (about
 * the median tx count), the first page and a deep one (90% into the list) of each list, cold walks for single
 * objects. No per-case target here: the suite sets each beside the bare route of its run, and the large chain
 * beside the small one (`key` names the case on both).
 *
 * A cold walk of the small chain (50 blocks, 25 burn blocks, 2,056 txs of its busiest) fits the API's caches,
 * of the large one (5,000 blocks...) does not: the pair would set a kept answer beside a rendered one. So such a
 * walk is compared across chains `rendered`, asked of an API that keeps nothing, and its kept figure is shown
 * but not compared; likewise the typical principal's pages (1 tx on the small chain, 50 on the large), compared
 * as `full pages`: 50-tx pages of principals with more, at offsets over their lists, rendered on both chains.
 */
function beyondCases(inputs: HttpInputs): HttpCase[] {
  const busy = inputs.busy.principal;
  const typical = inputs.typical.principals;
  const typicalCount = count(inputs.typical.txCount);
  const busyDeep = deepPageOffset(inputs.busy.txCount, 50);
  const typicalDeep = deepPageOffset(inputs.typical.txCount, 50);
  const burnBlocks = inputs.burnHeights.length;
  const cases: HttpCase[] = [];
  const add = (
    key: string,
    detail: string,
    endpoint: string,
    paths: string[],
    options: Pick<HttpCase, 'rendered' | 'notCompared'> = {},
  ) => cases.push({ key, name: detail ? `${key} (${detail})` : key, endpoint, paths, ...options });
  const KEPT_ON_SMALL = "a walk the small chain's caches hold: compared rendered";
  /** A cold walk: kept where the caches hold it (not compared), and rendered (compared). */
  const addCold = (key: string, detail: string, endpoint: string, paths: string[]) => {
    add(key, detail, endpoint, paths, { notCompared: KEPT_ON_SMALL });
    add(`${key}, rendered`, detail, endpoint, paths, { rendered: true });
  };

  const addressTxs = 'GET /extended/v2/addresses/:address/transactions';
  add('v2 address txs limit 50, busiest, first page', `${count(inputs.busy.txCount)} txs`, addressTxs, [
    `/extended/v2/addresses/${busy}/transactions?limit=50`,
  ]);
  add('v2 address txs limit 50, busiest, deep page', `offset ${count(busyDeep)}`, addressTxs, [
    `/extended/v2/addresses/${busy}/transactions?limit=50&offset=${busyDeep}`,
  ]);
  const typicalNotCompared = {
    notCompared:
      'pages of the median principal: 1 tx on the small chain, 50 on the large: compared as full pages',
  };
  add(
    'v2 address txs limit 50, typical, first page',
    `~${typicalCount} txs each`,
    addressTxs,
    typical.map((p) => `/extended/v2/addresses/${p}/transactions?limit=50`),
    typicalNotCompared,
  );
  add(
    'v2 address txs limit 50, typical, deep page',
    `offset ${count(typicalDeep)}`,
    addressTxs,
    typical.map((p) => `/extended/v2/addresses/${p}/transactions?limit=50&offset=${typicalDeep}`),
    typicalNotCompared,
  );
  const full = inputs.fullPages;
  if (full.length > 0) {
    add(
      'v2 address txs limit 50, full pages, rendered',
      `${count(full.length)} principals of ${FULL_PAGE_TXS}+ txs`,
      addressTxs,
      Array.from({ length: FULL_PAGES_WALK }, (_, i) => {
        const { principal, txCount } = full[i % full.length];
        // offsets spread over the list: 0 to the last full page
        const offset = Math.floor((((i * 7919) % 1000) / 1000) * (txCount - 50 + 1));
        return `/extended/v2/addresses/${principal}/transactions?limit=50&offset=${offset}`;
      }),
      { rendered: true },
    );
  }
  const events = 'GET /extended/v2/addresses/:address/transactions/:tx_id/events';
  addCold('v2 address tx events, busiest, cold txs', `${count(inputs.busyTxs.length)} txs`, events, [
    ...inputs.busyTxs.map((id) => `/extended/v2/addresses/${busy}/transactions/${id}/events`),
  ]);
  addCold('v2 address tx events, typical, cold txs', `${count(inputs.typicalTxs.length)} txs`, events, [
    ...inputs.typicalTxs.map((t) => `/extended/v2/addresses/${t.principal}/transactions/${t.txId}/events`),
  ]);

  const burnList = 'GET /extended/v2/burn-blocks';
  add(`burn blocks limit ${BLOCK_PAGE}, first page`, '', burnList, [
    `/extended/v2/burn-blocks?limit=${BLOCK_PAGE}`,
  ]);
  add(
    `burn blocks limit ${BLOCK_PAGE}, deep page`,
    `offset ${count(deepPageOffset(burnBlocks, BLOCK_PAGE))}`,
    burnList,
    [`/extended/v2/burn-blocks?limit=${BLOCK_PAGE}&offset=${deepPageOffset(burnBlocks, BLOCK_PAGE)}`],
  );
  addCold(
    'burn block by height or hash, cold',
    `${count(burnBlocks)} burn blocks`,
    'GET /extended/v2/burn-blocks/:height_or_hash',
    inputs.burnHeights.map((h, i) => `/extended/v2/burn-blocks/${i % 2 === 0 ? h : inputs.burnHashes[i]}`),
  );
  addCold(
    "burn block's blocks, cold",
    `${count(burnBlocks)} burn blocks`,
    'GET /extended/v2/burn-blocks/:height_or_hash/blocks',
    inputs.burnHeights.map((h) => `/extended/v2/burn-blocks/${h}/blocks`),
  );

  const blockList = 'GET /extended/v2/blocks';
  add(`blocks limit ${BLOCK_PAGE}, first page`, '', blockList, [`/extended/v2/blocks?limit=${BLOCK_PAGE}`]);
  add(
    `blocks limit ${BLOCK_PAGE}, deep page`,
    `cursor at height ${count(inputs.deepBlock.height)}`,
    blockList,
    [`/extended/v2/blocks?limit=${BLOCK_PAGE}&cursor=${inputs.deepBlock.indexBlockHash}`],
  );
  const blockTxs = 'GET /extended/v2/blocks/:height_or_hash/transactions';
  addCold("block's txs limit 50, cold, first page", `${count(inputs.heights.length)} blocks`, blockTxs, [
    ...inputs.heights.map((h) => `/extended/v2/blocks/${h}/transactions?limit=50`),
  ]);
  addCold(
    `block's txs limit 50, cold, offset ${BLOCK_TXS_DEEP}`,
    `${count(inputs.fullBlocks.length)} blocks`,
    blockTxs,
    [
      ...inputs.fullBlocks.map(
        (h) => `/extended/v2/blocks/${h}/transactions?limit=50&offset=${BLOCK_TXS_DEEP}`,
      ),
    ],
  );

  const txList = 'GET /extended/v1/tx';
  add('recent txs limit 50, first page', '', txList, ['/extended/v1/tx?limit=50']);
  add('recent txs limit 50, deep page', `offset ${count(deepPageOffset(inputs.canonicalTxs, 50))}`, txList, [
    `/extended/v1/tx?limit=50&offset=${deepPageOffset(inputs.canonicalTxs, 50)}`,
  ]);
  add('recent txs limit 50, contract_call, first page', '', txList, [
    '/extended/v1/tx?limit=50&type=contract_call',
  ]);
  const callsDeep = deepPageOffset(inputs.contractCalls, 50);
  add('recent txs limit 50, contract_call, deep page', `offset ${count(callsDeep)}`, txList, [
    `/extended/v1/tx?limit=50&type=contract_call&offset=${callsDeep}`,
  ]);

  const pending = count(inputs.mempool.pending);
  const mempoolList = 'GET /extended/v1/tx/mempool';
  add('mempool txs limit 50, first page', `${pending} pending`, mempoolList, [
    '/extended/v1/tx/mempool?limit=50',
  ]);
  add(
    'mempool txs limit 50, deep page',
    `offset ${count(deepPageOffset(inputs.mempool.pending, 50))}`,
    mempoolList,
    [`/extended/v1/tx/mempool?limit=50&offset=${deepPageOffset(inputs.mempool.pending, 50)}`],
  );
  const addressMempool = 'GET /extended/v1/address/:principal/mempool';
  add('address mempool limit 50, busiest sender', '', addressMempool, [
    `/extended/v1/address/${inputs.mempool.busySender}/mempool?limit=50`,
  ]);
  add('address mempool limit 50, other senders', `${count(inputs.mempool.senders.length)}`, addressMempool, [
    ...inputs.mempool.senders.map((p) => `/extended/v1/address/${p}/mempool?limit=50`),
  ]);

  const principalCases: [string, string, (p: string) => string][] = [
    ['nonces', 'GET /extended/v1/address/:principal/nonces', (p) => `/extended/v1/address/${p}/nonces`],
    ['v1 stx balance', 'GET /extended/v1/address/:principal/stx', (p) => `/extended/v1/address/${p}/stx`],
    [
      'v2 stx balance',
      'GET /extended/v2/addresses/:principal/balances/stx',
      (p) => `/extended/v2/addresses/${p}/balances/stx`,
    ],
    [
      'v2 ft balances',
      'GET /extended/v2/addresses/:principal/balances/ft',
      (p) => `/extended/v2/addresses/${p}/balances/ft`,
    ],
  ];
  for (const [what, endpoint, path] of principalCases) {
    add(`${what}, busiest`, `${count(inputs.busy.txCount)} txs`, endpoint, [path(busy)]);
    add(`${what}, typical`, `~${typicalCount} txs each`, endpoint, typical.map(path));
  }

  const holdings = 'GET /extended/v1/tokens/nft/holdings';
  const heldDeep = deepPageOffset(inputs.nft.busy.held, 50);
  const holder = inputs.nft.busy.principal;
  add('NFT holdings limit 50, busiest holder, first page', `${count(inputs.nft.busy.held)} held`, holdings, [
    `/extended/v1/tokens/nft/holdings?principal=${holder}&limit=50`,
  ]);
  add('NFT holdings limit 50, busiest holder, deep page', `offset ${count(heldDeep)}`, holdings, [
    `/extended/v1/tokens/nft/holdings?principal=${holder}&limit=50&offset=${heldDeep}`,
  ]);
  add('NFT holdings limit 50, other holders', `${count(inputs.nft.holders.length)}`, holdings, [
    ...inputs.nft.holders.map((p) => `/extended/v1/tokens/nft/holdings?principal=${p}&limit=50`),
  ]);

  add(
    'contract by id',
    `${count(inputs.contracts.length)} contracts`,
    'GET /extended/v1/contract/:contract_id',
    inputs.contracts.map((id) => `/extended/v1/contract/${id}`),
  );
  const search = 'GET /extended/v1/search/:id';
  add('search, cold tx ids', `${count(inputs.coldTxs.length)}`, search, [
    ...inputs.coldTxs.map((id) => `/extended/v1/search/${id}`),
  ]);
  add('search, block hashes and principals', '', search, [
    ...inputs.searchBlockHashes.flatMap((hash, i) => [
      `/extended/v1/search/${hash}`,
      `/extended/v1/search/${typical[i % typical.length]}`,
    ]),
  ]);
  return cases;
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
    key: c.key ?? c.name,
    family: c.family ?? 'ten',
    ...(c.notCompared ? { notCompared: c.notCompared } : {}),
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
    loadAverage: Math.round(loadavg()[0] * 100) / 100,
  };
}

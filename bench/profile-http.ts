// Where one HTTP case's time goes: the API process under `--cpu-prof` (top self-time functions and packages)
// and PostgreSQL's statements per request (pg_stat_statements: time, rows, buffers), for each case chosen.
// A fresh server per case, so each profile holds that case's load only.
//
//   npx tsx bench/profile-http.ts --cases <text,...> [--chain tiny|small] [--seconds 10] [--connections 32]
//                                 [--top 25] [--database-url <url>] [--without-profiler] [--checkout <dir>]
//
// `--database-url` serves a database that is already loaded (the 1M chain takes ~6 min of both cores to
// ingest) instead of generating and ingesting `--chain`: nothing is written to it, and as its cluster may be
// shared, statistics are what changed during the case (pg_stat_statements of that database, never reset) and
// PostgreSQL CPU is that of the API's own backends (`apiBackendPids`), not the whole cluster's.
// `--without-profiler` runs the API without `--cpu-prof`, for CPU figures the profiler does not inflate.
// `--checkout` serves the API of another checkout (e.g. /work/main) with this one's cases and inputs, so that two
// versions of the code are measured on the same walk (A/B runs on a database loaded once).
//
// Writes bench/out/profile-http.md and prints it. Absolute times move with the machine's load; the shares
// (which functions, which statements) are what to read.
import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { startPostgres } from '../test/support/postgres.js';
import {
  httpCases,
  runCase,
  selectInputs,
  startServer,
  RENDERED_ENV,
  type HttpCase,
  type HttpInputs,
  type Server,
} from './http.js';
import {
  BENCH_CHAINS,
  BENCH_SEED,
  benchChain,
  ingestInto,
  postmasterPid,
  processTreeCpuSeconds,
  profilingSettings,
  SERVER_SETTINGS,
} from './ingest.js';
import { topOfProfile } from './profile-top.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string' },
    chain: { type: 'string', default: 'small' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    top: { type: 'string', default: '25' },
    'database-url': { type: 'string' },
    'without-profiler': { type: 'boolean', default: false },
    checkout: { type: 'string' },
  },
});

const here = import.meta.dirname;
const log = (text: string) => process.stderr.write(`${text}\n`);

interface StatementRow {
  key: string;
  ms: number;
  calls: number;
  rows: number;
  blks: number;
  /** buffers not in shared_buffers: read from the OS (its page cache, or the disk) */
  reads: number;
  query: string;
}

/**
 * The cumulative statistics of the statements run in database `datname`. pg_stat_statements is cluster-wide, and
 * its view is read from the cluster's `postgres` database (`statsConnection`), so that nothing is created in
 * the database served.
 */
async function statementTotals(sql: postgres.Sql, datname: string): Promise<Map<string, StatementRow>> {
  const rows = await sql<StatementRow[]>`
    SELECT queryid::text || ':' || userid::text || ':' || toplevel::text AS key,
      total_exec_time::float8 AS ms, calls::float8 AS calls, rows::float8 AS rows,
      (shared_blks_hit + shared_blks_read)::float8 AS blks, shared_blks_read::float8 AS reads,
      left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 200) AS query
    FROM pg_stat_statements
    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = ${datname})
      AND query NOT LIKE '%pg_stat_statements%'`;
  return new Map(rows.map((r) => [r.key, r]));
}

/** A connection to the `postgres` database of the cluster serving `url`, with pg_stat_statements' view. */
async function statsConnection(url: string): Promise<postgres.Sql> {
  const statsUrl = new URL(url);
  statsUrl.pathname = '/postgres';
  const sql = postgres(statsUrl.href, { max: 1, onnotice: () => {} });
  await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
  return sql;
}

/** What each statement ran between two `statementTotals`, the costliest first. */
function statementsBetween(
  before: Map<string, StatementRow>,
  after: Map<string, StatementRow>,
): StatementRow[] {
  const changed: StatementRow[] = [];
  for (const [key, now] of after) {
    const was = before.get(key);
    const calls = now.calls - (was?.calls ?? 0);
    if (calls <= 0) continue;
    changed.push({
      key,
      query: now.query,
      calls,
      ms: now.ms - (was?.ms ?? 0),
      rows: now.rows - (was?.rows ?? 0),
      blks: now.blks - (was?.blks ?? 0),
      reads: now.reads - (was?.reads ?? 0),
    });
  }
  return changed.sort((a, b) => b.ms - a.ms).slice(0, 8);
}

/**
 * The PostgreSQL backends serving the API process `serverPid`: those of this database whose client port is
 * the local port of one of the process's TCP sockets (from /proc: its socket inodes, then /proc/net/tcp*).
 * On a cluster other processes use too, their CPU is what this API's requests cost PostgreSQL.
 */
async function apiBackendPids(sql: postgres.Sql, serverPid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${serverPid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${serverPid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // the descriptor closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${serverPid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // fields: sl, local_address (hex ip:port), rem_address, st, ..., inode (index 9)
      if (fields.length > 9 && inodes.has(fields[9])) ports.push(parseInt(fields[1].split(':')[1], 16));
    }
  }
  const rows = await sql<{ pid: number }[]>`
    SELECT pid FROM pg_stat_activity
    WHERE datname = current_database() AND client_port = ANY(${ports}::integer[])`;
  return rows.map((r) => r.pid);
}

/** The database to serve: the one given, or a new cluster with `--chain` ingested into it. */
interface Served {
  url: string;
  description: string;
  /** PostgreSQL CPU seconds so far that count for the API process `server` (called after its warm-up) */
  pgCpuSeconds(sql: postgres.Sql, server: Server): Promise<() => number>;
  stop(): Promise<void>;
}

async function serve(): Promise<Served> {
  const given = values['database-url'];
  if (given) {
    return {
      url: given,
      description: `database ${new URL(given).pathname.slice(1)} as loaded`,
      async pgCpuSeconds(sql, server) {
        const pids = await apiBackendPids(sql, server.pid);
        if (pids.length === 0)
          throw new Error('found no backend of the API (a TCP --database-url is needed)');
        return () => pids.reduce((sum, pid) => sum + processTreeCpuSeconds(pid), 0);
      },
      async stop() {},
    };
  }
  const label = values.chain as keyof typeof BENCH_CHAINS;
  if (!BENCH_CHAINS[label]) throw new Error('--chain is tiny, small or large');
  const { file } = await benchChain({ ...BENCH_CHAINS[label], seed: BENCH_SEED, dir: join(here, 'out') });
  const cluster = await startPostgres({
    settings: [...SERVER_SETTINGS, ...profilingSettings({ pgStats: true })],
  });
  try {
    const url = await cluster.createDatabase('profile');
    const ingest = await ingestInto(url, file, { engine: 'postgres', label: `ingest ${label}` });
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql`VACUUM ANALYZE`;
    await sql.end();
    return {
      url,
      description: `${label} chain (${ingest.canonicalTxs.toLocaleString('en-US')} txs)`,
      async pgCpuSeconds() {
        const pid = postmasterPid(cluster);
        return () => processTreeCpuSeconds(pid);
      },
      stop: () => cluster.stop(),
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/**
 * Cases of this tool only (not of the suite): what a read costs without the API around it, to set beside the
 * API's case of the same walk. Served by bench/ceiling-server.ts, as the suite's ceilings.
 */
const profileOnlyCases = (inputs: HttpInputs): HttpCase[] => [
  {
    name:
      `tx by id, cold, read alone (${inputs.coldTxs.length.toLocaleString('en-US')} ids): ` +
      "the API's statement and batching, rows sent unrendered",
    endpoint: 'ceiling: tx read alone',
    paths: inputs.coldTxs.map((id) => `/ceiling/tx/${id}`),
  },
  {
    name:
      `block by burn block height, read alone (${inputs.burnHeights.length.toLocaleString('en-US')} heights): ` +
      "the API's statement and batching, the block sent unrendered",
    endpoint: 'ceiling: burn block read alone',
    paths: inputs.burnHeights.map((h) => `/ceiling/burn-block/${h}`),
  },
];

async function main() {
  const filter = (values.cases ?? '')
    .split(',')
    .map((f) => f.trim().toLowerCase())
    .filter(Boolean);
  if (filter.length === 0) throw new Error('--cases <text,...> names the cases to profile');
  const profDir = join(here, 'out', 'prof-http');
  mkdirSync(profDir, { recursive: true });
  const served = await serve();
  const sections: string[] = [];
  try {
    const sql = postgres(served.url, { max: 1, onnotice: () => {} });
    const stats = await statsConnection(served.url);
    const datname = new URL(served.url).pathname.slice(1);
    const inputs = await selectInputs(sql as never);
    const cases = [...httpCases(inputs), ...profileOnlyCases(inputs)].filter((c) =>
      filter.some((f) => c.name.toLowerCase().includes(f)),
    );
    if (cases.length === 0) throw new Error(`--cases matches no case`);
    const profiling = !values['without-profiler'];
    sections.push(
      `# HTTP profile, ${served.description}, ${values.seconds} s per case, ${values.connections} connections` +
        (values.checkout ? `, API of ${values.checkout}` : '') +
        (profiling ? '' : ', profiler off'),
    );
    for (const c of cases) {
      for (const f of readdirSync(profDir)) rmSync(join(profDir, f));
      process.env.BENCH_SERVER_NODE_OPTIONS = profiling ? `--cpu-prof --cpu-prof-dir=${profDir}` : '';
      // the ceiling cases (the suite's and this tool's) are served by the ceiling server of this checkout
      const server = c.endpoint.startsWith('ceiling:')
        ? await startServer('ceiling', served.url)
        : await startServer('api', served.url, values.checkout, c.rendered ? RENDERED_ENV : {});
      let result;
      let statements: StatementRow[];
      try {
        const options = {
          warmupSeconds: 0,
          connections: Number(values.connections),
          serverPid: server.pid,
          pgPid: 0,
        };
        // a short warm-up (JIT, prepared statements) before the statistics start
        await runCase(server.base, c, { ...options, seconds: 1 });
        const pgCpuSeconds = await served.pgCpuSeconds(sql, server);
        const before = await statementTotals(stats, datname);
        result = await runCase(server.base, c, { ...options, seconds: Number(values.seconds), pgCpuSeconds });
        statements = statementsBetween(before, await statementTotals(stats, datname));
      } finally {
        await server.stop();
      }
      const per = (n: number) => n / Math.max(result.requests, 1);
      const profiles = readdirSync(profDir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(profDir, f))
        .sort((a, b) => statSync(b).size - statSync(a).size);
      log(`${c.name}: ${result.reqPerSec} req/s, profile ${profiles[0] ?? '(none)'}`);
      sections.push(
        '',
        `## ${c.name}`,
        '',
        `${result.reqPerSec.toLocaleString('en-US')} req/s${profiling ? ' (with the profiler on)' : ''}, ` +
          `p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, ` +
          `${result.bytesPerResponse.toLocaleString('en-US')} bytes; CPU µs per request: ` +
          `API ${Math.round(per(result.cpuSeconds.server * 1e6))}, PostgreSQL ${Math.round(per(result.cpuSeconds.postgres * 1e6))}.`,
        '',
        '| µs/request | calls/request | rows/call | buffers/call | of which read/call | statement |',
        '| ---------: | ------------: | --------: | -----------: | -----------------: | --------- |',
        // statements run less than once per 200 requests are another client's (a shared database) or set-up
        ...statements
          .filter((s) => per(s.calls) >= 0.005)
          .map(
            (s) =>
              `| ${per(s.ms * 1e3).toFixed(1)} | ${per(s.calls).toFixed(2)} | ${(s.rows / s.calls).toFixed(1)} | ` +
              `${(s.blks / s.calls).toFixed(1)} | ${(s.reads / s.calls).toFixed(2)} | \`${s.query.replaceAll('|', '\\|')}\` |`,
          ),
        '',
        profiles[0] ? topOfProfile(profiles[0], Number(values.top)) : '(no CPU profile written)',
      );
    }
    await sql.end();
    await stats.end();
  } finally {
    await served.stop();
  }
  const text = sections.join('\n');
  writeFileSync(join(here, 'out', 'profile-http.md'), text);
  process.stdout.write(text);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

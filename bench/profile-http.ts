// Where one HTTP case's time goes: the API process under `--cpu-prof` (top self-time functions and packages)
// and PostgreSQL's statements per request (pg_stat_statements: time, rows, buffers), for each case chosen.
// A fresh server per case, so each profile holds that case's load only.
//
//   npx tsx bench/profile-http.ts --cases <text,...> [--chain tiny|small] [--seconds 10] [--connections 32]
//                                 [--top 25] [--database-url postgres://…/large]
//
// `--database-url` serves a database already indexed (the 1M chain takes ~6 min of both cores to ingest)
// instead of ingesting `--chain` into a throwaway cluster. That cluster may be shared: nothing is written to
// it, pg_stat_statements is not reset (the statements are the difference of two snapshots, so others' load
// shows too, under its own text), and PostgreSQL's CPU is that of the API's own backends (found by an
// application_name of this run) rather than the whole cluster's.
//
// Writes bench/out/profile-http.md and prints it. Absolute times move with the machine's load; the shares
// (which functions, which statements) are what to read.
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { startPostgres } from '../test/support/postgres.js';
import { httpCases, runCase, selectInputs, startServer } from './http.js';
import {
  BENCH_CHAINS,
  BENCH_SEED,
  benchChain,
  ingestInto,
  postmasterPid,
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
  },
});

const here = import.meta.dirname;
const log = (text: string) => process.stderr.write(`${text}\n`);

interface StatementRow {
  ms: number;
  calls: number;
  rows: number;
  blks: number;
  query: string;
}

type StatementSnapshot = Map<string, StatementRow>;

/**
 * Every statement's counters in `database` now (no reset: the cluster may be shared), by query id. `sql` is
 * connected to a database of the cluster that has the pg_stat_statements view (its rows cover all of them).
 */
async function statementSnapshot(sql: postgres.Sql, database: string): Promise<StatementSnapshot> {
  const rows = await sql<(StatementRow & { id: string })[]>`
    SELECT queryid::text || ':' || userid::text AS id, total_exec_time::float8 AS ms,
      calls::float8 AS calls, rows::float8 AS rows, (shared_blks_hit + shared_blks_read)::float8 AS blks,
      left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 200) AS query
    FROM pg_stat_statements
    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = ${database})
      AND query NOT LIKE '%pg_stat_statements%'`;
  return new Map(rows.map(({ id, ...row }) => [id, row]));
}

/** The statements run between two snapshots, the most time first. */
function statementsBetween(before: StatementSnapshot, after: StatementSnapshot, top: number): StatementRow[] {
  const ran: StatementRow[] = [];
  for (const [id, now] of after) {
    const then = before.get(id);
    const calls = now.calls - (then?.calls ?? 0);
    if (calls <= 0) continue;
    ran.push({
      ms: now.ms - (then?.ms ?? 0),
      calls,
      rows: now.rows - (then?.rows ?? 0),
      blks: now.blks - (then?.blks ?? 0),
      query: now.query,
    });
  }
  return ran.sort((a, b) => b.ms - a.ms).slice(0, top);
}

/** `url` with an application_name that names this run's API, whose backends can then be found. */
function urlNamed(url: string, applicationName: string): string {
  const named = new URL(url);
  named.searchParams.set('application_name', applicationName);
  return named.toString();
}

/** Where the servers read from, and whose CPU counts as PostgreSQL's. */
interface Target {
  url: string;
  /** a database of the same cluster where the pg_stat_statements view exists */
  statsUrl: string;
  title: string;
  /** the pids whose CPU is PostgreSQL's for the API just started (after its warm-up) */
  pgPids(sql: postgres.Sql): Promise<number[]>;
  stop(): Promise<void>;
}

async function ingestedTarget(label: keyof typeof BENCH_CHAINS): Promise<Target> {
  const { file } = await benchChain({ ...BENCH_CHAINS[label], seed: BENCH_SEED, dir: join(here, 'out') });
  const cluster = await startPostgres({
    settings: [...SERVER_SETTINGS, ...profilingSettings({ pgStats: true })],
  });
  try {
    const url = await cluster.createDatabase('profile');
    const ingest = await ingestInto(url, file, { engine: 'postgres', label: `ingest ${label}` });
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql`VACUUM ANALYZE`;
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
    await sql.end();
    return {
      url,
      statsUrl: url,
      title: `${label} chain (${ingest.canonicalTxs.toLocaleString('en-US')} txs)`,
      pgPids: async () => [postmasterPid(cluster)],
      stop: () => cluster.stop(),
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

async function existingTarget(databaseUrl: string): Promise<Target> {
  const applicationName = `profile-http-${process.pid}`;
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const [{ txs }] = await sql<{ txs: number }[]>`SELECT count(*)::float8 AS txs FROM txs WHERE canonical`;
  // the view of pg_stat_statements where it was created: here, else in the cluster's `postgres` database (the
  // database served is only read)
  const [{ here: statsHere }] = await sql<{ here: boolean }[]>`
    SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_stat_statements') AS here`;
  await sql.end();
  const statsUrl = new URL(databaseUrl);
  if (!statsHere) statsUrl.pathname = '/postgres';
  return {
    url: urlNamed(databaseUrl, applicationName),
    statsUrl: statsUrl.toString(),
    title: `${new URL(databaseUrl).pathname.slice(1)} database (${txs.toLocaleString('en-US')} canonical txs, not ingested here)`,
    async pgPids(s) {
      const rows = await s<{ pid: number }[]>`
        SELECT pid FROM pg_stat_activity WHERE application_name = ${applicationName} AND pid <> pg_backend_pid()`;
      if (rows.length === 0) throw new Error(`no backend named ${applicationName}`);
      return rows.map((r) => r.pid);
    },
    stop: async () => {},
  };
}

async function main() {
  const label = values.chain as keyof typeof BENCH_CHAINS;
  if (!values['database-url'] && !BENCH_CHAINS[label]) throw new Error('--chain is tiny, small or large');
  const filter = (values.cases ?? '')
    .split(',')
    .map((f) => f.trim().toLowerCase())
    .filter(Boolean);
  if (filter.length === 0) throw new Error('--cases <text,...> names the cases to profile');
  const profDir = join(here, 'out', 'prof-http');
  mkdirSync(profDir, { recursive: true });
  const target = values['database-url']
    ? await existingTarget(values['database-url'])
    : await ingestedTarget(label);
  const sections: string[] = [];
  try {
    const sql = postgres(target.url, { max: 1, onnotice: () => {} });
    const stats = postgres(target.statsUrl, { max: 1, onnotice: () => {} });
    const [{ database }] = await sql<{ database: string }[]>`SELECT current_database() AS database`;
    const inputs = await selectInputs(sql as never);
    const cases = httpCases(inputs).filter((c) => filter.some((f) => c.name.toLowerCase().includes(f)));
    if (cases.length === 0) throw new Error(`--cases matches no case`);
    sections.push(
      `# HTTP profile, ${target.title}, ${values.seconds} s per case, ${values.connections} connections`,
    );
    for (const c of cases) {
      for (const f of readdirSync(profDir)) rmSync(join(profDir, f));
      process.env.BENCH_SERVER_NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${profDir}`;
      const server = await startServer('api', target.url);
      let result;
      let before: StatementSnapshot;
      try {
        // a short warm-up (JIT, prepared statements) before the statistics start
        await runCase(server.base, c, {
          seconds: 1,
          warmupSeconds: 0,
          connections: Number(values.connections),
          serverPid: server.pid,
          pgPid: [],
        });
        const pgPid = await target.pgPids(sql);
        before = await statementSnapshot(stats, database);
        result = await runCase(server.base, c, {
          seconds: Number(values.seconds),
          warmupSeconds: 0,
          connections: Number(values.connections),
          serverPid: server.pid,
          pgPid,
        });
      } finally {
        await server.stop();
      }
      const statements = statementsBetween(before, await statementSnapshot(stats, database), 8);
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
        `${result.reqPerSec.toLocaleString('en-US')} req/s (with the profiler on), p50 ${result.latencyMs.p50} ms, ` +
          `p99 ${result.latencyMs.p99} ms, ${result.bytesPerResponse.toLocaleString('en-US')} bytes; CPU µs per request: ` +
          `API ${Math.round(per(result.cpuSeconds.server * 1e6))}, PostgreSQL ${Math.round(per(result.cpuSeconds.postgres * 1e6))}.`,
        '',
        '| µs/request | calls/request | rows/call | buffers/call | statement |',
        '| ---------: | ------------: | --------: | -----------: | --------- |',
        ...statements.map(
          (s) =>
            `| ${per(s.ms * 1e3).toFixed(1)} | ${per(s.calls).toFixed(2)} | ${(s.rows / Math.max(s.calls, 1)).toFixed(1)} | ` +
            `${(s.blks / Math.max(s.calls, 1)).toFixed(1)} | \`${s.query.replaceAll('|', '\\|')}\` |`,
        ),
        '',
        profiles[0] ? topOfProfile(profiles[0], Number(values.top)) : '(no CPU profile written)',
      );
    }
    await sql.end();
    await stats.end();
  } finally {
    await target.stop();
  }
  const text = sections.join('\n');
  writeFileSync(join(here, 'out', 'profile-http.md'), text);
  process.stdout.write(text);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

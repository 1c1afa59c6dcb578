// Where one HTTP case's time goes: the API process under `--cpu-prof` (top self-time functions and packages)
// and PostgreSQL's statements per request (pg_stat_statements: time, rows, buffers), for each case chosen.
// A fresh server per case, so each profile holds that case's load only.
//
//   npx tsx bench/profile-http.ts --cases <text,...> [--chain tiny|small] [--seconds 10] [--connections 32]
//                                 [--top 25]
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

async function main() {
  const label = values.chain as keyof typeof BENCH_CHAINS;
  if (!BENCH_CHAINS[label]) throw new Error('--chain is tiny, small or large');
  const filter = (values.cases ?? '')
    .split(',')
    .map((f) => f.trim().toLowerCase())
    .filter(Boolean);
  if (filter.length === 0) throw new Error('--cases <text,...> names the cases to profile');
  const { file } = await benchChain({ ...BENCH_CHAINS[label], seed: BENCH_SEED, dir: join(here, 'out') });
  const profDir = join(here, 'out', 'prof-http');
  mkdirSync(profDir, { recursive: true });
  const cluster = await startPostgres({
    settings: [...SERVER_SETTINGS, ...profilingSettings({ pgStats: true })],
  });
  const sections: string[] = [];
  try {
    const url = await cluster.createDatabase('profile');
    const ingest = await ingestInto(url, file, { engine: 'postgres', label: `ingest ${label}` });
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql`VACUUM ANALYZE`;
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
    const inputs = await selectInputs(sql as never);
    const cases = httpCases(inputs).filter((c) => filter.some((f) => c.name.toLowerCase().includes(f)));
    if (cases.length === 0) throw new Error(`--cases matches no case`);
    sections.push(
      `# HTTP profile, ${label} chain (${ingest.canonicalTxs.toLocaleString('en-US')} txs), ` +
        `${values.seconds} s per case, ${values.connections} connections`,
    );
    for (const c of cases) {
      for (const f of readdirSync(profDir)) rmSync(join(profDir, f));
      process.env.BENCH_SERVER_NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${profDir}`;
      const server = await startServer('api', url);
      let result;
      try {
        // a short warm-up (JIT, prepared statements) before the statistics start
        await runCase(server.base, c, {
          seconds: 1,
          warmupSeconds: 0,
          connections: Number(values.connections),
          serverPid: server.pid,
          pgPid: postmasterPid(cluster),
        });
        await sql`SELECT pg_stat_statements_reset()`;
        result = await runCase(server.base, c, {
          seconds: Number(values.seconds),
          warmupSeconds: 0,
          connections: Number(values.connections),
          serverPid: server.pid,
          pgPid: postmasterPid(cluster),
        });
      } finally {
        await server.stop();
      }
      const statements = await sql<StatementRow[]>`
        SELECT total_exec_time::float8 AS ms, calls::float8 AS calls, rows::float8 AS rows,
          (shared_blks_hit + shared_blks_read)::float8 AS blks,
          left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 200) AS query
        FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'
        ORDER BY total_exec_time DESC LIMIT 8`;
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
  } finally {
    await cluster.stop();
  }
  const text = sections.join('\n');
  writeFileSync(join(here, 'out', 'profile-http.md'), text);
  process.stdout.write(text);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

// Ingest benchmark: replays a generated chain into a throwaway PostgreSQL cluster (or PGlite) through the
// same ingestor the live event observer uses, and reports transactions and blocks indexed per second.
//
//   npx tsx bench/ingest.ts [--blocks 5000] [--accounts 10000] [--txs-per-block 200] [--seed bench]
//                           [--file chain.tsv] [--engine postgres|pglite] [--fsync]
//
// The chain is generated once per size into bench/out/ and reused. Results go to bench/out/ingest-<engine>.json.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { generateFile } from '../src/cli/generate.js';
import { defaultNakamotoHeight, type GenerateReport } from '../src/devnet/chain.js';
import { Ingestor } from '../src/ingest/ingestor.js';
import { replayFile } from '../src/ingest/replay.js';
import { replayProgress } from '../src/cli/progress.js';
import { openDatabase, type Engine } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { Store } from '../src/store/store.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';

export interface IngestResult {
  engine: Engine;
  file: string;
  messages: number;
  blocks: number;
  canonicalTxs: number;
  seconds: number;
  txsPerSecond: number;
  blocksPerSecond: number;
  generation?: Pick<GenerateReport, 'signedTxs' | 'seconds' | 'signedTxsPerSecond'>;
  /** CPU time spent while replaying, by this process (the indexer) and by the PostgreSQL server (all its processes) */
  cpuSeconds: { indexer: number; postgres?: number };
}

/** CPU seconds used so far by a process and its children, live and exited (Linux /proc). */
export function processTreeCpuSeconds(pid: number): number {
  const ticks = 100; // USER_HZ
  const stat = (p: number | string) => {
    try {
      const text = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      // fields[1] = ppid; [11..14] = utime stime cutime cstime
      return {
        ppid: Number(fields[1]),
        own: Number(fields[11]) + Number(fields[12]),
        children: Number(fields[13]) + Number(fields[14]),
      };
    } catch {
      return undefined;
    }
  };
  const root = stat(pid);
  if (!root) return 0;
  let total = root.own + root.children;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(entry);
    if (s && s.ppid === pid) total += s.own;
  }
  return total / ticks;
}

/** The postmaster's pid, from its data directory. */
export function postmasterPid(cluster: TestPostgres): number {
  return Number(readFileSync(join(cluster.dataDir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/**
 * Generates (or reuses) the chain file for these sizes: epoch 2.x, then Nakamoto from the generator's
 * default height (the chain's current shape; the height is in the file name).
 */
export async function benchChain(options: {
  blocks: number;
  accounts: number;
  txsPerBlock: number;
  seed: string;
  dir: string;
}): Promise<{ file: string; report?: GenerateReport }> {
  mkdirSync(options.dir, { recursive: true });
  const nakamotoHeight = defaultNakamotoHeight(options.blocks);
  const file = join(
    options.dir,
    `chain-${options.seed}-${options.blocks}b-${options.accounts}a-${options.txsPerBlock}t-n${nakamotoHeight}.tsv`,
  );
  if (existsSync(file)) return { file };
  const report = await generateFile({ ...options, nakamotoHeight }, file + '.partial');
  const { renameSync } = await import('node:fs');
  renameSync(file + '.partial', file);
  return { file, report };
}

/**
 * The suite's chains (issue 17): `tiny` the size of the one the original API was measured on (~190 txs),
 * `small` (~10,000 txs) and `large` (~1,000,000 txs). Generated once per size into bench/out/.
 */
export const BENCH_CHAINS = {
  tiny: { blocks: 14, accounts: 10, txsPerBlock: 14 },
  small: { blocks: 50, accounts: 10_000, txsPerBlock: 200 },
  large: { blocks: 5000, accounts: 10_000, txsPerBlock: 200 },
} as const;
export const BENCH_SEED = 'bench';

/**
 * PostgreSQL durability during the run. `full` is PostgreSQL's default (fsync, full page writes, and a
 * commit waits for its WAL flush): what production runs, each ingest message paying one WAL flush. `off`
 * turns all three off (a disposable database, as the unit tests use).
 */
export const DURABILITY: Record<string, { fsync: boolean; settings: string[] }> = {
  full: { fsync: true, settings: ['synchronous_commit=on', 'full_page_writes=on'] },
  off: { fsync: false, settings: ['synchronous_commit=off', 'full_page_writes=off'] },
};

/**
 * Server memory and checkpoint spacing as a write-heavy production server of this size would have them
 * (the test clusters' 256 MB of shared buffers is a tenth of what the 1M-tx chain's indexes need: past
 * ~300k txs each block's random index inserts evicted dirty pages, and with fsync on an eviction may wait
 * for a WAL flush). Everything else is PostgreSQL's default.
 */
export const SERVER_SETTINGS = ['shared_buffers=2GB', 'max_wal_size=8GB', 'checkpoint_timeout=15min'];

/** PostgreSQL settings for profiling ingest: statement statistics, plans of slow statements. */
export function profilingSettings(options: { pgStats?: boolean; explainMs?: number }): string[] {
  return [
    ...(options.pgStats
      ? ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all']
      : []),
    ...(options.explainMs !== undefined
      ? [
          'session_preload_libraries=auto_explain',
          `auto_explain.log_min_duration=${options.explainMs}`,
          'auto_explain.log_analyze=on',
          'auto_explain.log_buffers=on',
        ]
      : []),
  ];
}

/** Replays `file` into a new database on `engine` and measures it. */
export async function benchIngest(
  file: string,
  engine: Engine,
  options: { fsync?: boolean; pgStats?: boolean; explainMs?: number } = {},
): Promise<IngestResult> {
  if (engine === 'pglite') return ingestInto('', file, { engine });
  const cluster = await startPostgres({ fsync: options.fsync, settings: profilingSettings(options) });
  try {
    const url = await cluster.createDatabase('bench');
    return await ingestInto(url, file, { ...options, engine, pgPid: postmasterPid(cluster) });
  } finally {
    if (options.explainMs !== undefined) {
      copyFileSync(
        join(cluster.dataDir, 'server.log'),
        join(import.meta.dirname, 'out', 'ingest-server.log'),
      );
    }
    await cluster.stop();
  }
}

/**
 * Replays `file` into the (empty) database at `url` (PGlite in memory when empty) through the ingestor,
 * measuring time and CPU (this process, and PostgreSQL's processes when `pgPid` is given).
 */
export async function ingestInto(
  url: string,
  file: string,
  options: { engine: Engine; pgPid?: number; pgStats?: boolean; label?: string },
): Promise<IngestResult> {
  const { engine, pgPid } = options;
  const db = await openDatabase({ url, pgliteDir: 'memory://', poolMax: 1 });
  const store = new Store(db);
  try {
    await migrate(db.sql);
    const ingestor = new Ingestor(store, { isMainnet: true, logger: pino({ level: 'warn' }) });
    const bar = replayProgress(options.label ?? `ingest (${engine})`);
    const pgCpu0 = pgPid ? processTreeCpuSeconds(pgPid) : 0;
    const cpu0 = process.cpuUsage();
    const stats = await replayFile(ingestor, file, { onProgress: bar.onProgress });
    const cpu = process.cpuUsage(cpu0);
    const cpuSeconds = {
      indexer: Math.round((cpu.user + cpu.system) / 1e4) / 100,
      postgres: pgPid ? Math.round((processTreeCpuSeconds(pgPid) - pgCpu0) * 100) / 100 : undefined,
    };
    bar.stop(true);
    if (options.pgStats) await printStatementStats(store);
    const [row] = await store.sql<{ n: number }[]>`
      SELECT count(DISTINCT tx_id)::int AS n FROM txs
      WHERE canonical AND microblock_canonical AND index_block_hash <> ''`;
    return {
      engine,
      file,
      messages: stats.messages,
      blocks: stats.blocks,
      canonicalTxs: row.n,
      seconds: stats.seconds,
      txsPerSecond: Math.round(row.n / stats.seconds),
      blocksPerSecond: Math.round((stats.blocks / stats.seconds) * 10) / 10,
      cpuSeconds,
    };
  } finally {
    await store.close();
  }
}

/** The statements that took the most server time (pg_stat_statements), to stderr. */
async function printStatementStats(store: Store): Promise<void> {
  await store.sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
  const rows = await store.sql<{ ms: number; calls: number; mean: number; rows: number; query: string }[]>`
    SELECT round(total_exec_time)::int AS ms, calls::int, round(mean_exec_time::numeric, 3)::float AS mean,
      rows::int, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 160) AS query
    FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25`;
  for (const r of rows) {
    process.stderr.write(
      `${String(r.ms).padStart(8)} ms ${String(r.calls).padStart(7)} calls ${String(r.mean).padStart(9)} ms/call  ${r.query}\n`,
    );
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      blocks: { type: 'string', default: String(BENCH_CHAINS.large.blocks) },
      accounts: { type: 'string', default: String(BENCH_CHAINS.large.accounts) },
      'txs-per-block': { type: 'string', default: String(BENCH_CHAINS.large.txsPerBlock) },
      seed: { type: 'string', default: BENCH_SEED },
      file: { type: 'string' },
      engine: { type: 'string', default: 'postgres' },
      fsync: { type: 'boolean', default: false },
      'pg-stats': { type: 'boolean', default: false },
      /** log plans of statements slower than this many ms to bench/out/ingest-server.log (auto_explain) */
      explain: { type: 'string' },
    },
  });
  const outDir = join(import.meta.dirname, 'out');
  const engine = values.engine as Engine;
  if (engine !== 'postgres' && engine !== 'pglite') throw new Error('--engine is postgres or pglite');
  const chain = values.file
    ? { file: values.file }
    : await benchChain({
        blocks: Number(values.blocks),
        accounts: Number(values.accounts),
        txsPerBlock: Number(values['txs-per-block']),
        seed: values.seed,
        dir: outDir,
      });
  const result: IngestResult = await benchIngest(chain.file, engine, {
    fsync: values.fsync,
    pgStats: values['pg-stats'],
    explainMs: values.explain === undefined ? undefined : Number(values.explain),
  });
  if ('report' in chain && chain.report) {
    const { signedTxs, seconds, signedTxsPerSecond } = chain.report;
    result.generation = { signedTxs, seconds, signedTxsPerSecond };
  }
  const machine = { cpus: cpus().length, cpu: cpus()[0]?.model, memoryGb: Math.round(totalmem() / 2 ** 30) };
  mkdirSync(outDir, { recursive: true });
  writeFileSync(
    join(outDir, `ingest-${engine}.json`),
    JSON.stringify({ date: new Date().toISOString(), machine, fsync: values.fsync, ...result }, null, 2) +
      '\n',
  );
  process.stdout.write(
    `${engine}: ${result.canonicalTxs} txs in ${result.blocks} blocks, ${result.seconds.toFixed(1)} s: ` +
      `${result.txsPerSecond} txs/s, ${result.blocksPerSecond} blocks/s; CPU: indexer ${result.cpuSeconds.indexer} s, ` +
      `postgres ${result.cpuSeconds.postgres ?? '-'} s\n`,
  );
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}

// Ingest benchmark: replays a generated chain into a throwaway PostgreSQL cluster (or PGlite) through the
// same ingestor the live event observer uses, and reports transactions and blocks indexed per second.
//
//   npx tsx bench/ingest.ts [--blocks 5000] [--accounts 10000] [--txs-per-block 200] [--seed bench]
//                           [--file chain.tsv] [--engine postgres|pglite] [--durability off|full]
//                           [--pg-stats] [--explain <ms>] [--sample-states] [--ceiling <share>]
//
// The cluster has the suite's settings (SERVER_SETTINGS; durability `off` unless told). The chain is generated
// once per size into bench/out/ and reused. Results go to bench/out/ingest-<engine>.json; with --pg-stats, a
// profile of the PostgreSQL side (statements with their time and WAL, WAL records and full-page images,
// rows written and the size per table and index, the ingest backend's CPU apart from the rest) to
// bench/out/ingest-profile.md. For the Node side: `node --cpu-prof --import tsx bench/ingest.ts ...`, then
// `npx tsx bench/profile-top.ts <file.cpuprofile>`. With --sample-states, how the ingest backend spends the
// wall time (on CPU, waiting for the WAL, idle between or inside transactions: bench/state-sampler.ts). With
// --ceiling, what PostgreSQL alone spends to store the same rows (bench/ingest-ceiling.ts).
import { spawn } from 'node:child_process';
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
import { measureIngestCeiling, type IngestCeiling } from './ingest-ceiling.js';
import type { StateSamples } from './state-sampler.js';

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
  /** the same rows loaded by PostgreSQL alone (bench/ingest-ceiling.ts), when asked for */
  ceiling?: IngestCeiling;
  /** seconds the replay took to apply its first `markBlocks` blocks, when asked for */
  secondsAtMark?: number;
}

/** The txs an index holds: canonical, anchored, each counted once (what ingest's txs/s counts). */
export async function canonicalTxCount(store: Store): Promise<number> {
  const [row] = await store.sql<{ n: number }[]>`
    SELECT count(DISTINCT tx_id)::int AS n FROM txs
    WHERE canonical AND microblock_canonical AND index_block_hash <> ''`;
  return row.n;
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
 * The suite's chains: `tiny` the size of the one the original API was measured on (~190 txs),
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
      ? [
          'shared_preload_libraries=pg_stat_statements',
          'pg_stat_statements.track=all',
          // how often a prepared statement is planned again (a custom plan each call), and for how long
          'pg_stat_statements.track_planning=on',
        ]
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
  options: {
    durability?: keyof typeof DURABILITY;
    pgStats?: boolean;
    explainMs?: number;
    sampleStates?: boolean;
    ceilingShare?: number;
  } = {},
): Promise<IngestResult> {
  if (engine === 'pglite') return ingestInto('', file, { engine });
  const durability = DURABILITY[options.durability ?? 'off'];
  const cluster = await startPostgres({
    fsync: durability.fsync,
    settings: [...SERVER_SETTINGS, ...durability.settings, ...profilingSettings(options)],
  });
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
  options: {
    engine: Engine;
    pgPid?: number;
    pgStats?: boolean;
    sampleStates?: boolean;
    label?: string;
    /** after the replay, measure the ingest ceiling on this share of the chain (PostgreSQL only) */
    ceilingShare?: number;
    /** note how long the replay took to apply this many blocks (`secondsAtMark`) */
    markBlocks?: number;
  },
): Promise<IngestResult> {
  const { engine, pgPid } = options;
  const db = await openDatabase({ url, pgliteDir: 'memory://', poolMax: 1 });
  const store = new Store(db);
  try {
    await migrate(db.sql);
    const profile = options.pgStats ? await startProfile(store) : undefined;
    const sampler = options.sampleStates && url ? await startStateSampler(store, url) : undefined;
    const ingestor = new Ingestor(store, { isMainnet: true, logger: pino({ level: 'warn' }) });
    const bar = replayProgress(options.label ?? `ingest (${engine})`);
    const pgCpu0 = pgPid ? processTreeCpuSeconds(pgPid) : 0;
    const cpu0 = process.cpuUsage();
    let secondsAtMark: number | undefined;
    const stats = await replayFile(ingestor, file, {
      onProgress: (progress) => {
        bar.onProgress(progress);
        if (progress.stats.blocks === options.markBlocks && secondsAtMark === undefined)
          secondsAtMark = progress.stats.seconds;
      },
    });
    const cpu = process.cpuUsage(cpu0);
    const states = await sampler?.finish();
    const cpuSeconds = {
      indexer: Math.round((cpu.user + cpu.system) / 1e4) / 100,
      postgres: pgPid ? Math.round((processTreeCpuSeconds(pgPid) - pgCpu0) * 100) / 100 : undefined,
    };
    bar.stop(true);
    const txs = await canonicalTxCount(store);
    if (states) process.stderr.write(`${formatStates(states)}\n`);
    if (profile) {
      const text =
        (await profile.finish(txs, stats.seconds, cpuSeconds)) + (states ? `\n${formatStates(states)}` : '');
      const out = join(import.meta.dirname, 'out', 'ingest-profile.md');
      writeFileSync(out, text);
      process.stderr.write(`${text}\n(written to ${out})\n`);
    }
    const ceiling =
      options.ceilingShare && url
        ? await ingestCeiling(url, stats.blocks, options.ceilingShare, pgPid)
        : undefined;
    return {
      engine,
      file,
      messages: stats.messages,
      blocks: stats.blocks,
      canonicalTxs: txs,
      seconds: stats.seconds,
      txsPerSecond: Math.round(txs / stats.seconds),
      secondsAtMark,
      blocksPerSecond: Math.round((stats.blocks / stats.seconds) * 10) / 10,
      cpuSeconds,
      ceiling,
    };
  } finally {
    await store.close();
  }
}

/** `measureIngestCeiling` on `share` of the chain just replayed, one transaction per block's worth of rows. */
async function ingestCeiling(url: string, blocks: number, share: number, pgPid?: number) {
  const transactions = Math.max(1, Math.round(blocks * share));
  const ceiling = await measureIngestCeiling(url, { share, transactions, pgPid });
  process.stderr.write(
    `ingest ceiling (the same rows loaded by PostgreSQL alone, ${ceiling.txs} txs in ${transactions} transactions): ` +
      `${ceiling.txsPerSecond} txs/s; backend ${ceiling.backendUsPerTx} µs/tx (one backend: ` +
      `${ceiling.oneBackendTxsPerSecond} txs/s), PostgreSQL all ${ceiling.postgresUsPerTx ?? '-'} µs/tx, ` +
      `WAL ${ceiling.walBytesPerTx} bytes/tx; per table, rows/tx and statement µs/tx: ` +
      `${ceiling.tables.map((t) => `${t.name} ${t.rowsPerTx} ${t.usPerTx}`).join(', ')}\n`,
  );
  return ceiling;
}

/** Starts bench/state-sampler.ts on the ingest connection (the pool's one connection). */
async function startStateSampler(store: Store, url: string) {
  const [{ pid }] = await store.sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'state-sampler.ts'), url, String(pid)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    async finish(): Promise<StateSamples> {
      child.stdin.end();
      await exited;
      return JSON.parse(out) as StateSamples;
    },
  };
}

/** The sampled states of the ingest backend as a markdown table, by share of the samples. */
function formatStates(states: StateSamples): string {
  const share = (n: number) => `${((n / Math.max(states.samples, 1)) * 100).toFixed(1)}%`;
  const rows = (tally: Record<string, number>, limit: number) =>
    Object.entries(tally)
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([key, n]) => `| ${key.replaceAll('|', '\\|')} | ${share(n)} |`);
  return [
    `## Ingest backend state (${states.samples.toLocaleString('en-US')} samples, share of wall time)`,
    '',
    '| state | share |',
    '| ----- | ----: |',
    ...rows(states.states, 20),
    '',
    '| idle in transaction, after | share |',
    '| -------------------------- | ----: |',
    ...rows(states.idleInTransactionAfter, 12),
    '',
  ].join('\n');
}

interface StatementRow {
  ms: number;
  calls: number;
  plans: number;
  plan_ms: number;
  rows: number;
  wal_bytes: number;
  wal_fpi: number;
  blks: number;
  dirtied: number;
  query: string;
}

interface RelationRow {
  relation: string;
  kind: string;
  bytes: number;
  inserted: number | null;
  updated: number | null;
  hot: number | null;
  deleted: number | null;
  blks: number;
}

/**
 * Where PostgreSQL's ingest work goes, per canonical tx: statement statistics (pg_stat_statements: time, WAL,
 * buffers touched), the cluster's WAL (pg_stat_wal: records, full-page images, bytes; and the LSN distance),
 * the ingest backend's own CPU (the pool's one connection) apart from autovacuum, WAL writer and checkpointer,
 * and per table and index the rows written, the buffers touched and the size reached. Counters are reset
 * after the migrations so only the replay counts.
 */
async function startProfile(store: Store) {
  await store.sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
  await store.sql`SELECT pg_stat_statements_reset()`;
  await store.sql`SELECT pg_stat_reset_shared('wal')`;
  await store.sql`SELECT pg_stat_reset()`;
  const [{ lsn: lsn0, pid }] = await store.sql<{ lsn: string; pid: number }[]>`
    SELECT pg_current_wal_lsn()::text AS lsn, pg_backend_pid() AS pid`;
  const backendCpu0 = processTreeCpuSeconds(pid);
  return {
    async finish(txs: number, seconds: number, cpu: { indexer: number; postgres?: number }): Promise<string> {
      const backendCpu = processTreeCpuSeconds(pid) - backendCpu0;
      const [{ pid: pidAfter }] = await store.sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      // statistics reach the views when the backend reports them (at the end of each transaction)
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const [wal] = await store.sql<{ records: number; fpi: number; bytes: number; lsn_bytes: number }[]>`
        SELECT wal_records::float8 AS records, wal_fpi::float8 AS fpi, wal_bytes::float8 AS bytes,
          pg_wal_lsn_diff(pg_current_wal_lsn(), ${lsn0}::pg_lsn)::float8 AS lsn_bytes
        FROM pg_stat_wal`;
      const statements = await store.sql<StatementRow[]>`
        SELECT total_exec_time::float8 AS ms, calls::float8 AS calls, rows::float8 AS rows,
          plans::float8 AS plans, total_plan_time::float8 AS plan_ms,
          wal_bytes::float8 AS wal_bytes, wal_fpi::float8 AS wal_fpi,
          (shared_blks_hit + shared_blks_read)::float8 AS blks, shared_blks_dirtied::float8 AS dirtied,
          left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 150) AS query
        FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%' ORDER BY total_exec_time DESC`;
      const relations = await store.sql<RelationRow[]>`
        SELECT c.relname AS relation, CASE c.relkind WHEN 'i' THEN 'index' ELSE 'table' END AS kind,
          pg_relation_size(c.oid)::float8 AS bytes,
          t.n_tup_ins::float8 AS inserted, t.n_tup_upd::float8 AS updated, t.n_tup_hot_upd::float8 AS hot,
          t.n_tup_del::float8 AS deleted,
          coalesce(st.heap_blks_hit + st.heap_blks_read, si.idx_blks_hit + si.idx_blks_read, 0)::float8 AS blks
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
        LEFT JOIN pg_stat_user_tables t ON t.relid = c.oid
        LEFT JOIN pg_statio_user_tables st ON st.relid = c.oid
        LEFT JOIN pg_statio_user_indexes si ON si.indexrelid = c.oid
        WHERE c.relkind IN ('r', 'i') AND pg_relation_size(c.oid) > 0
        ORDER BY coalesce(st.heap_blks_hit + st.heap_blks_read, si.idx_blks_hit + si.idx_blks_read, 0) DESC`;
      const per = (n: number) => n / Math.max(txs, 1);
      const r = (n: number, digits = 0) =>
        n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
      const totalMs = statements.reduce((sum, s) => sum + s.ms, 0);
      const lines = [
        `# Ingest profile: ${r(txs)} canonical txs in ${seconds.toFixed(1)} s (${r(txs / seconds)} txs/s)`,
        '',
        `CPU µs per tx: indexer ${r(per(cpu.indexer * 1e6))}, PostgreSQL all processes ${cpu.postgres === undefined ? '–' : r(per(cpu.postgres * 1e6))}, ` +
          `of which the ingest backend ${r(per(backendCpu * 1e6))}${pidAfter === pid ? '' : ' (the connection changed during the run: partial)'}; ` +
          `statement execution time ${r(per(totalMs * 1e3))} µs per tx.`,
        `WAL per tx: ${r(per(wal.bytes))} bytes (LSN distance ${r(per(wal.lsn_bytes))}), ${r(per(wal.records), 1)} records, ` +
          `${r(per(wal.fpi), 2)} full-page images.`,
        '',
        '## Statements (by execution time)',
        '',
        '| µs/tx | share | calls | plans | plan µs/tx | rows/call | WAL bytes/tx | FPI/1k tx | buffers/tx | dirtied/1k tx | statement |',
        '| ----: | ----: | ----: | ----: | ---------: | --------: | -----------: | --------: | ---------: | ------------: | --------- |',
        ...statements
          .slice(0, 30)
          .map(
            (s) =>
              `| ${r(per(s.ms * 1e3), 1)} | ${r((s.ms / totalMs) * 100, 1)}% | ${r(s.calls)} | ${r(s.plans)} | ${r(per(s.plan_ms * 1e3), 1)} | ${r(s.rows / Math.max(s.calls, 1), 1)} | ` +
              `${r(per(s.wal_bytes))} | ${r(per(s.wal_fpi) * 1000, 1)} | ${r(per(s.blks), 1)} | ${r(per(s.dirtied) * 1000, 1)} | ` +
              `\`${s.query.replaceAll('|', '\\|')}\` |`,
          ),
        '',
        '## Tables and indexes (by buffers touched)',
        '',
        '| relation | kind | rows inserted/tx | updated/tx (HOT) | deleted/tx | buffers/tx | bytes/tx |',
        '| -------- | ---- | ---------------: | ---------------: | ---------: | ---------: | -------: |',
        ...relations.map(
          (x) =>
            `| ${x.relation} | ${x.kind} | ${x.inserted === null ? '' : r(per(x.inserted), 2)} | ` +
            `${x.updated === null ? '' : `${r(per(x.updated), 2)} (${r(per(x.hot ?? 0), 2)})`} | ` +
            `${x.deleted === null ? '' : r(per(x.deleted), 2)} | ${r(per(x.blks), 1)} | ${r(per(x.bytes))} |`,
        ),
        '',
      ];
      return lines.join('\n');
    },
  };
}

async function main() {
  const { values } = parseArgs({
    options: {
      // the chain generated (and kept in bench/out) when no --file is given
      blocks: { type: 'string' },
      accounts: { type: 'string' },
      'txs-per-block': { type: 'string' },
      seed: { type: 'string' },
      file: { type: 'string' },
      engine: { type: 'string', default: 'postgres' },
      durability: { type: 'string', default: 'off' },
      'pg-stats': { type: 'boolean', default: false },
      'sample-states': { type: 'boolean', default: false },
      /** after the replay, the ingest ceiling on this share of the chain (0 < share ≤ 1; bench/ingest-ceiling.ts) */
      ceiling: { type: 'string' },
      /** log plans of statements slower than this many ms to bench/out/ingest-server.log (auto_explain) */
      explain: { type: 'string' },
    },
  });
  const outDir = join(import.meta.dirname, 'out');
  const engine = values.engine as Engine;
  if (engine !== 'postgres' && engine !== 'pglite') throw new Error('--engine is postgres or pglite');
  if (!DURABILITY[values.durability]) throw new Error('--durability is off or full');
  const generatorOptions = ['blocks', 'accounts', 'txs-per-block', 'seed'] as const;
  const given = generatorOptions.filter((name) => values[name] !== undefined);
  if (values.file && given.length > 0) {
    // a recorded file is replayed whole: cut it first (head of the TSV) to replay fewer blocks
    throw new Error(
      `--${given.join(', --')}: options of a generated chain; with --file the whole file is replayed`,
    );
  }
  const chain = values.file
    ? { file: values.file }
    : await benchChain({
        blocks: Number(values.blocks ?? BENCH_CHAINS.large.blocks),
        accounts: Number(values.accounts ?? BENCH_CHAINS.large.accounts),
        txsPerBlock: Number(values['txs-per-block'] ?? BENCH_CHAINS.large.txsPerBlock),
        seed: values.seed ?? BENCH_SEED,
        dir: outDir,
      });
  const result: IngestResult = await benchIngest(chain.file, engine, {
    durability: values.durability as keyof typeof DURABILITY,
    pgStats: values['pg-stats'],
    sampleStates: values['sample-states'],
    ceilingShare: values.ceiling === undefined ? undefined : Number(values.ceiling),
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
    JSON.stringify(
      { date: new Date().toISOString(), machine, durability: values.durability, ...result },
      null,
      2,
    ) + '\n',
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

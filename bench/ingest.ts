// Ingest benchmark: replays a generated chain into a throwaway PostgreSQL cluster (or PGlite) through the
// same ingestor the live event observer uses, and reports transactions and blocks indexed per second.
//
//   npx tsx bench/ingest.ts [--blocks 5000] [--accounts 10000] [--txs-per-block 200] [--seed bench]
//                           [--file chain.tsv] [--engine postgres|pglite] [--fsync]
//
// The chain is generated once per size into bench/out/ and reused. Results go to bench/out/ingest-<engine>.json.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { generateFile } from '../src/cli/generate.js';
import type { GenerateReport } from '../src/ingest/generator/chain.js';
import { Ingestor } from '../src/ingest/ingestor.js';
import { progressBar, replayFile } from '../src/ingest/replay.js';
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
}

/** Generates (or reuses) the chain file for these sizes. */
export async function benchChain(options: {
  blocks: number;
  accounts: number;
  txsPerBlock: number;
  seed: string;
  dir: string;
}): Promise<{ file: string; report?: GenerateReport }> {
  mkdirSync(options.dir, { recursive: true });
  const file = join(
    options.dir,
    `chain-${options.seed}-${options.blocks}b-${options.accounts}a-${options.txsPerBlock}t.tsv`,
  );
  if (existsSync(file)) return { file };
  const report = await generateFile(options, file + '.partial');
  const { renameSync } = await import('node:fs');
  renameSync(file + '.partial', file);
  return { file, report };
}

/** Replays `file` into a new database on `engine` and measures it. */
export async function benchIngest(
  file: string,
  engine: Engine,
  options: { fsync?: boolean } = {},
): Promise<IngestResult> {
  let cluster: TestPostgres | undefined;
  let url = '';
  if (engine === 'postgres') {
    cluster = await startPostgres({ fsync: options.fsync });
    url = await cluster.createDatabase('bench');
  }
  const db = await openDatabase({ url, pgliteDir: 'memory://', poolMax: 1 });
  const store = new Store(db);
  try {
    await migrate(db.sql);
    const ingestor = new Ingestor(store, { isMainnet: true, logger: pino({ level: 'warn' }) });
    const bar = progressBar(`ingest (${engine})`);
    const stats = await replayFile(ingestor, file, { onProgress: bar.update });
    bar.done();
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
    };
  } finally {
    await store.close();
    await cluster?.stop();
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      blocks: { type: 'string', default: '5000' },
      accounts: { type: 'string', default: '10000' },
      'txs-per-block': { type: 'string', default: '200' },
      seed: { type: 'string', default: 'bench' },
      file: { type: 'string' },
      engine: { type: 'string', default: 'postgres' },
      fsync: { type: 'boolean', default: false },
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
  const result: IngestResult = await benchIngest(chain.file, engine, { fsync: values.fsync });
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
      `${result.txsPerSecond} txs/s, ${result.blocksPerSecond} blocks/s\n`,
  );
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}

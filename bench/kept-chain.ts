// A bench chain loaded once into a PostgreSQL cluster kept on disk (bench/out/kept-<chain>/), for looking at
// plans and timing statements on the 1M-tx chain without its ~20 minutes of generating and ingesting each time.
//
//   npx tsx bench/kept-chain.ts [--chain small|large] [--pg-stats] [--stop]
//
// The first run generates the chain (bench/out/, as `npm run bench` does), replays it into database `bench`
// of a new cluster with the bench's server settings and durability off, and runs VACUUM ANALYZE (as the bench
// does before its reads); later runs start the same cluster and apply any migration added since. It then
// prints the database URL and keeps the server up until SIGINT/SIGTERM (or, with --stop, stops at once).
// `--pg-stats` loads pg_stat_statements (what `bench/profile-http.ts --database-url` reads).
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { migrate } from '../src/store/migrate.js';
import { startPersistentPostgres } from '../test/support/postgres.js';
import {
  BENCH_CHAINS,
  BENCH_SEED,
  DURABILITY,
  SERVER_SETTINGS,
  benchChain,
  ingestInto,
  profilingSettings,
} from './ingest.js';

const { values } = parseArgs({
  options: {
    chain: { type: 'string', default: 'large' },
    stop: { type: 'boolean', default: false },
    'pg-stats': { type: 'boolean', default: false },
  },
});
const label = values.chain as keyof typeof BENCH_CHAINS;
if (!(label in BENCH_CHAINS)) throw new Error(`--chain is one of ${Object.keys(BENCH_CHAINS).join(', ')}`);

const outDir = join(import.meta.dirname, 'out');
const clusterDir = join(outDir, `kept-${label}`);
// written once the chain is ingested and analyzed: a run cut short before it starts over
const loadedFile = join(clusterDir, 'loaded.json');
const log = (text: string) => process.stderr.write(`kept-chain: ${text}\n`);

async function main() {
  const { file } = await benchChain({ ...BENCH_CHAINS[label], seed: BENCH_SEED, dir: outDir });
  const cluster = await startPersistentPostgres(clusterDir, [
    ...SERVER_SETTINGS,
    ...DURABILITY.off.settings,
    ...profilingSettings({ pgStats: values['pg-stats'] }),
  ]);
  const url = cluster.url.replace(/\/postgres$/, '/bench');
  const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
  try {
    if (!existsSync(loadedFile)) {
      await admin`DROP DATABASE IF EXISTS bench`;
      await admin`CREATE DATABASE bench`;
      log(`ingesting ${file}`);
      const ingest = await ingestInto(url, file, { engine: 'postgres', label: `ingest ${label}` });
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      await sql`VACUUM ANALYZE`;
      await sql.end();
      writeFileSync(loadedFile, JSON.stringify(ingest, null, 2));
      log(`${ingest.canonicalTxs} txs, ${ingest.blocks} blocks in ${ingest.seconds.toFixed(0)} s`);
    } else {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      await migrate(sql as never);
      await sql.end();
    }
  } finally {
    await admin.end();
  }
  process.stdout.write(`${url}\n`);
  if (values.stop) return cluster.stop();
  log('up; SIGINT or SIGTERM stops it');
  // a pending promise alone does not keep Node running: without the timer the process ended here, leaving the
  // server up with no one to stop it
  const running = setInterval(() => {}, 1 << 30);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(running);
  await cluster.stop();
}

await main();

// How stale a reader in a split topology is: `serve --write-only` and `serve --read-only` as real processes,
// on one PostgreSQL database (`--topology same`: the reader learns of a new tip by NOTIFY) or with the reader
// on a streaming replica (`--topology replica`: no NOTIFY; replica lag, then the reader's own reads or the
// one-second expiry of its cached chain state). For each block of a generated chain, a client holding the
// previous `blocks/latest` ETag asks the reader again and again from the moment the writer answered 200 to
// the node, until it gets the new block; the time that took is the staleness.
//
//   npx tsx bench/split-staleness.ts [--topology same|replica] [--blocks 60]
import { parseArgs } from 'node:util';
import { readTsv, type RecordedMessage } from '../src/protocol/tsv.js';
import { openDatabase } from '../src/store/db.js';
import { listMigrations } from '../src/store/migrate.js';
import { freePort, startPostgres, startReplica, type TestPostgres } from '../test/support/postgres.js';
import { sleep, startServe, type ServeProcess } from '../test/support/serve-process.js';
import { benchChain } from './ingest.js';

const { values } = parseArgs({
  options: {
    topology: { type: 'string', default: 'same' },
    blocks: { type: 'string', default: '60' },
  },
});
const topology = values.topology;
if (topology !== 'same' && topology !== 'replica') throw new Error('--topology is same or replica');
const blockCount = Number(values.blocks);

const { file } = await benchChain({
  blocks: blockCount,
  accounts: 40,
  txsPerBlock: 5,
  seed: 'split',
  dir: 'bench/out',
});
const blocks: RecordedMessage[][] = [];
const pending: RecordedMessage[] = [];
for await (const message of readTsv(file)) {
  pending.push(message);
  if (message.path === '/new_block') blocks.push(pending.splice(0));
}

// synchronous_commit on, as in production (the test clusters turn it off): the primary streams a commit's
// WAL at once instead of on the WAL writer's next round (up to 600 ms later)
const primary = await startPostgres({
  replication: topology === 'replica',
  settings: ['synchronous_commit=on'],
});
let replica: TestPostgres | undefined;
let replicaDb: Awaited<ReturnType<typeof openDatabase>> | undefined;
const processes: ServeProcess[] = [];
try {
  const primaryUrl = await primary.createDatabase('split');
  const observerPort = await freePort();
  const writer = await startServe({
    databaseUrl: primaryUrl,
    apiPort: await freePort(),
    observerPort,
    mode: 'write-only',
  });
  processes.push(writer);
  const readerEnv: Record<string, string> = {};
  if (topology === 'replica') {
    replica = await startReplica(primary);
    const replicaUrl = primaryUrl.replace(`:${primary.port}/`, `:${replica.port}/`);
    const db = await openDatabase({ url: replicaUrl, pgliteDir: '', poolMax: 1 });
    replicaDb = db;
    const migrations = (await listMigrations()).length;
    for (;;) {
      const [row] = await db.sql`SELECT count(*)::int AS n FROM schema_migrations`.catch(() => [{ n: 0 }]);
      if (row.n === migrations) break;
      await sleep(50);
    }
    readerEnv.DATABASE_REPLICA_URLS = replicaUrl;
  }
  const apiPort = await freePort();
  processes.push(
    await startServe({
      databaseUrl: primaryUrl,
      apiPort,
      observerPort: await freePort(),
      mode: 'read-only',
      env: readerEnv,
    }),
  );
  const latest = async (etag?: string) => {
    const res = await fetch(`http://127.0.0.1:${apiPort}/extended/v2/blocks/latest`, {
      headers: etag ? { 'if-none-match': etag } : {},
    });
    const text = await res.text();
    return {
      status: res.status,
      etag: res.headers.get('etag') ?? undefined,
      tip: text ? (JSON.parse(text) as { index_block_hash: string }).index_block_hash : undefined,
    };
  };

  // per block: how long after the writer's 200 the reader still answered with the previous tip (0: never)
  const staleForMs: number[] = [];
  const replicaLagMs: number[] = [];
  let stale304 = 0;
  let staleBodies = 0;
  let etag: string | undefined;
  const writerDb = await openDatabase({ url: primaryUrl, pgliteDir: '', poolMax: 1 });
  for (const messages of blocks) {
    let appliedAt = 0;
    for (const m of messages) {
      const res = await fetch(`http://127.0.0.1:${observerPort}${m.path}`, {
        method: 'POST',
        body: m.payload,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${m.path} ${m.id}: ${res.status}`);
      appliedAt = performance.now();
    }
    // the tip after this block (a sibling block at the tip's height leaves it where it was)
    const [{ tip }] = await writerDb.sql<{ tip: string }[]>`SELECT index_block_hash AS tip FROM chain_tip`;
    // on a replica: when the tip got there (what the reader cannot beat)
    const replicated = replicaDb && waitForTip(replicaDb, tip, appliedAt);
    let staleUntil = appliedAt;
    for (;;) {
      const answer = await latest(etag);
      if (answer.status === 304 && etag === `"${tip}:latest"`) break;
      if (answer.status === 200 && answer.tip === tip) {
        etag = answer.etag;
        break;
      }
      staleUntil = performance.now();
      if (answer.status === 304) stale304 += 1;
      else staleBodies += 1;
      if (staleUntil - appliedAt > 10_000) throw new Error(`tip ${tip} not served within 10 s`);
    }
    staleForMs.push(staleUntil - appliedAt);
    if (replicated) replicaLagMs.push(await replicated);
  }
  await writerDb.close();
  const sorted = [...staleForMs].sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      topology,
      blocks: sorted.length,
      blocks_answered_stale: sorted.filter((ms) => ms > 0).length,
      stale_for_ms: quantiles(staleForMs),
      ...(replicaLagMs.length > 0 ? { replica_lag_ms: quantiles(replicaLagMs) } : {}),
      stale_answers: { not_modified: stale304, previous_block: staleBodies },
    }),
  );
} finally {
  for (const p of processes.reverse()) await p.kill('SIGTERM');
  await replicaDb?.close();
  await replica?.stop();
  await primary.stop();
}

function quantiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1));
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
}

/** Milliseconds from `since` until the database's chain tip is `tip`. */
async function waitForTip(db: NonNullable<typeof replicaDb>, tip: string, since: number): Promise<number> {
  for (;;) {
    const [row] = await db.sql<{ tip: string }[]>`SELECT index_block_hash AS tip FROM chain_tip`;
    if (row.tip === tip) return performance.now() - since;
    await sleep(1);
  }
}

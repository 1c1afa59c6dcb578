import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import autocannon from 'autocannon';
import postgres from 'postgres';
import pino from 'pino';
import { benchChain } from '../../bench/ingest.js';
import { httpCases, selectInputs } from '../../bench/http.js';
import { Ingestor, type MessageOutcome } from '../../src/ingest/ingestor.js';
import { readTsv, type RecordedMessage } from '../../src/protocol/tsv.js';
import { migrate } from '../../src/store/migrate.js';
import { Store } from '../../src/store/store.js';
import { connectTestDatabase, stopOwnCluster } from '../support/database.js';
import { freePort, startPersistentPostgres } from '../support/postgres.js';
import { deliver, newSendStats } from '../support/sender.js';
import { sleep, startServe } from '../support/serve-process.js';

// Load soak (npm run test:soak): a real `serve` process on a 1M-tx chain, 32 connections of a mixed read
// workload (every endpoint of the contract, hot and cold inputs, busy and quiet accounts, deep offsets) for
// 5 minutes while new blocks arrive on its observer port every few seconds. Zero errors and zero non-2xx;
// p50/p99 and the server's RSS at start and end are reported.
//
// The chain is bench's 1M-tx one (bench/out/chain-bench-5000b-10000a-200t-n2001.tsv, generated if missing). It is
// loaded once (~10+ minutes) into a PostgreSQL cluster kept in bench/out/soak-pg, without its last blocks,
// which are kept aside (bench/out/soak-pg/tail.json) to arrive during the soak; each run reads from a fresh
// copy of the loaded database (CREATE DATABASE ... TEMPLATE). Settings: SOAK_SECONDS (300), SOAK_CONNECTIONS
// (32), SOAK_BLOCK_INTERVAL_MS (3000), SOAK_CHAIN (the chain file), SOAK_HELD_BACK_BLOCKS (120).

after(stopOwnCluster);

const root = join(import.meta.dirname, '..', '..');
const outDir = join(root, 'bench', 'out');
const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 32);
const BLOCK_INTERVAL_MS = Number(process.env.SOAK_BLOCK_INTERVAL_MS ?? 3_000);
const HELD_BACK_BLOCKS = Number(process.env.SOAK_HELD_BACK_BLOCKS ?? 120);
const clusterDir = join(outDir, 'soak-pg');
const markerFile = join(clusterDir, 'loaded.json');
const tailFile = join(clusterDir, 'tail.json');
const log = (text: string) => process.stderr.write(`soak: ${text}\n`);

interface Loaded {
  chain: string;
  heldBackBlocks: number;
  messages: number;
  blocks: number;
  seconds: number;
}

async function chainFile(): Promise<string> {
  if (process.env.SOAK_CHAIN) return process.env.SOAK_CHAIN;
  const options = { blocks: 5000, accounts: 10000, txsPerBlock: 200, seed: 'bench', dir: outDir };
  return (await benchChain(options)).file;
}

/** Loads the chain but its last blocks into `soak_base` (once); returns the held-back messages. */
async function loadBase(
  adminUrl: string,
  chain: string,
): Promise<{ tail: RecordedMessage[]; loaded: Loaded }> {
  if (existsSync(markerFile) && existsSync(tailFile)) {
    const loaded = JSON.parse(readFileSync(markerFile, 'utf8')) as Loaded;
    if (loaded.chain === chain && loaded.heldBackBlocks === HELD_BACK_BLOCKS) {
      const tail = (JSON.parse(readFileSync(tailFile, 'utf8')) as RecordedMessage[]).map((m) => ({
        ...m,
        receivedAt: new Date(m.receivedAt),
      }));
      return { tail, loaded };
    }
  }
  log(`counting the blocks of ${chain}`);
  let totalBlocks = 0;
  for await (const m of readTsv(chain)) if (m.path === '/new_block') totalBlocks++;
  const lastLoaded = totalBlocks - HELD_BACK_BLOCKS;

  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin`DROP DATABASE IF EXISTS soak_base`;
  await admin`CREATE DATABASE soak_base`;
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = '/soak_base';
  const db = await connectTestDatabase(url.toString());
  const store = new Store(db);
  const started = performance.now();
  const tail: RecordedMessage[] = [];
  let messages = 0;
  let blocks = 0;
  try {
    await migrate(db.sql);
    const ingestor = new Ingestor(store, { isMainnet: true, logger: pino({ level: 'warn' }) });
    let inFlight: Promise<MessageOutcome> | undefined;
    for await (const { bytesRead: _bytesRead, ...m } of readTsv(chain)) {
      if (blocks >= lastLoaded) {
        tail.push(m);
        continue;
      }
      // the next message is parsed while the database applies the previous one (as replay does)
      const prepared = ingestor.prepare(m.path, m.payload, m.receivedAt);
      await inFlight;
      inFlight = ingestor.enqueue(prepared);
      inFlight.catch(() => {});
      messages++;
      if (m.path === '/new_block' && ++blocks % 250 === 0) {
        log(
          `loaded ${blocks} of ${lastLoaded} blocks (${Math.round((performance.now() - started) / 1000)} s)`,
        );
      }
    }
    await inFlight;
    await db.sql`VACUUM ANALYZE`;
  } finally {
    await store.close();
  }
  const loaded: Loaded = {
    chain,
    heldBackBlocks: HELD_BACK_BLOCKS,
    messages,
    blocks,
    seconds: Math.round((performance.now() - started) / 1000),
  };
  writeFileSync(tailFile, JSON.stringify(tail));
  writeFileSync(markerFile, JSON.stringify(loaded, null, 2));
  return { tail, loaded };
}

describe('load soak on a 1M-tx chain (postgres)', () => {
  test(`${CONNECTIONS} connections of mixed reads while blocks arrive: no errors, p99 and RSS reported`, async () => {
    const chain = await chainFile();
    // production-like memory for the 1M-tx indexes; the cluster is kept (and its data) between runs
    const pg = await startPersistentPostgres(clusterDir, ['shared_buffers=1GB', 'max_wal_size=4GB']);
    try {
      const { tail, loaded } = await loadBase(pg.url, chain);
      log(`base: ${loaded.blocks} blocks (${loaded.messages} messages) loaded in ${loaded.seconds} s`);
      const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
      await admin`DROP DATABASE IF EXISTS soak_run`;
      await admin`CREATE DATABASE soak_run TEMPLATE soak_base`;
      await admin.end();
      const databaseUrl = await (async () => {
        const u = new URL(pg.url);
        u.pathname = '/soak_run';
        return u.toString();
      })();
      const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      const inputs = await selectInputs(sql as never);
      const [{ txs: txsAtStart }] = await sql<{ txs: number }[]>`
        SELECT count(*)::int AS txs FROM txs WHERE canonical AND microblock_canonical`;
      // The mix: every endpoint case of the bench, each request taking the next case in turn.
      const cases = httpCases(inputs).filter((c) => c.endpoint !== 'ceiling');
      const cursor = cases.map(() => 0);
      let turn = 0;
      const nextPath = () => {
        const k = turn++ % cases.length;
        return cases[k].paths[cursor[k]++ % cases[k].paths.length];
      };

      const apiPort = await freePort();
      const observerPort = await freePort();
      const service = await startServe({
        databaseUrl,
        apiPort,
        observerPort,
        env: { LOG_LEVEL: 'warn', NODE_ENV: 'production' },
      });
      try {
        // warm-up: every case once, each must answer 200
        for (const c of cases) {
          const res = await fetch(`http://127.0.0.1:${apiPort}${c.paths[0]}`);
          await res.arrayBuffer();
          assert.equal(res.status, 200, `${c.name}: ${c.paths[0]}`);
        }
        const rss: { at: number; mb: number }[] = [];
        const t0 = performance.now();
        const sampleRss = () =>
          rss.push({
            at: Math.round((performance.now() - t0) / 1000),
            mb: Math.round(service.rss() / 2 ** 20),
          });
        sampleRss();
        const sampler = setInterval(sampleRss, 15_000);

        // Blocks keep arriving: the held-back messages, in order, one block every BLOCK_INTERVAL_MS.
        const send = newSendStats();
        let sending = true;
        let blocksSent = 0;
        const ingestMs: number[] = [];
        const sender = (async () => {
          for (const m of tail) {
            if (!sending) break;
            const startedAt = performance.now();
            await deliver(m, { url: () => `http://127.0.0.1:${observerPort}`, giveUpAfterMs: 60_000 }, send);
            if (m.path === '/new_block') {
              blocksSent++;
              ingestMs.push(performance.now() - startedAt);
              await sleep(BLOCK_INTERVAL_MS);
            }
          }
        })();

        const result = await autocannon({
          url: `http://127.0.0.1:${apiPort}`,
          connections: CONNECTIONS,
          duration: SECONDS,
          timeout: 10,
          requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: nextPath() }) }],
        });
        sending = false;
        await sender;
        clearInterval(sampler);
        sampleRss();

        const [{ txs: txsAtEnd }] = await sql<{ txs: number }[]>`
          SELECT count(*)::int AS txs FROM txs WHERE canonical AND microblock_canonical`;
        await sql.end();
        ingestMs.sort((a, b) => a - b);
        const summary = {
          seconds: SECONDS,
          connections: CONNECTIONS,
          chainTxsAtStart: txsAtStart,
          chainTxsAtEnd: txsAtEnd,
          requests: result.requests.total,
          reqPerSec: Math.round(result.requests.total / result.duration),
          latencyMs: {
            p50: result.latency.p50,
            p90: result.latency.p90,
            p99: result.latency.p99,
            max: result.latency.max,
          },
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          blocksArrived: blocksSent,
          observerMessages: send.messages,
          observerFailures: send.failures,
          blockIngestMsP50: Math.round(ingestMs[Math.floor(ingestMs.length / 2)] ?? 0),
          blockIngestMsMax: Math.round(ingestMs[ingestMs.length - 1] ?? 0),
          rssMb: { start: rss[0].mb, end: rss[rss.length - 1].mb, max: Math.max(...rss.map((r) => r.mb)) },
          rssSamples: rss,
        };
        console.log(`load soak: ${JSON.stringify(summary)}`);
        writeFileSync(join(outDir, 'soak-result.json'), JSON.stringify(summary, null, 2));

        assert.equal(result.errors, 0, 'no connection errors');
        assert.equal(result.timeouts, 0, 'no timeouts');
        assert.equal(result.non2xx, 0, 'every answer a 2xx');
        assert.deepEqual(send.failures, {}, 'the observer accepted every message at once');
        assert.ok(
          blocksSent >= Math.floor((SECONDS * 1000) / (BLOCK_INTERVAL_MS + 2_000)),
          `${blocksSent} blocks`,
        );
        assert.ok(txsAtEnd > txsAtStart, 'the chain grew');
        // Stable memory: the end within 1.5x the start plus a margin for caches filling up.
        assert.ok(summary.rssMb.end < summary.rssMb.start * 1.5 + 100, JSON.stringify(summary.rssMb));
        assert.equal(service.child.exitCode, null, 'the service is still up');
      } finally {
        await service.kill('SIGTERM');
      }
    } finally {
      await pg.stop();
    }
  });
});

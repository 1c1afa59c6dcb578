// Ingest on the live path (bench finding F-ingest-live-path): `serve` as a real process on an
// empty PostgreSQL database, and the first `blocks` blocks of a recorded chain (with every message between
// them) POSTed to its observer port one after another, each once the previous one was answered 200, as a
// stacks-node sends them. The replay prepares the next message while the database applies the current one;
// the live path cannot (the node sends the next message only after the answer), so it is measured apart.
// Used by `npm run bench`; on its own:
//
//   npx tsx bench/observer-ingest.ts --file <chain.tsv> [--blocks 500] [--durability full|off]
//
// BENCH_SERVER_NODE_OPTIONS: extra node flags for `serve`, e.g. `--cpu-prof --cpu-prof-dir=bench/out/prof`
// (a profile per thread: the main thread's observer server, and the ingest worker's).
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readTsv } from '../src/protocol/tsv.js';
import { openDatabase } from '../src/store/db.js';
import { Store } from '../src/store/store.js';
import { freePort, startPostgres } from '../test/support/postgres.js';
import { startServe } from '../test/support/serve-process.js';
import {
  canonicalTxCount,
  DURABILITY,
  postmasterPid,
  processTreeCpuSeconds,
  SERVER_SETTINGS,
} from './ingest.js';

export interface ObserverIngestResult {
  /** blocks posted (`/new_block` messages) */
  blocks: number;
  /** messages posted, of every path */
  messages: number;
  /** canonical txs indexed once they were all answered */
  txs: number;
  seconds: number;
  txsPerSecond: number;
  /** CPU per tx of the `serve` process (observer server, ingest thread, API server idle) and of PostgreSQL */
  cpuUsPerTx: { serve: number; postgres?: number };
  /**
   * `serve`'s CPU per tx by thread: the main thread (observer server, hand-offs, API server idle), the ingest
   * worker (the busiest other thread: it parses, decodes and writes), and the rest (V8's GC and compiler
   * helpers, libuv, the module loaders)
   */
  serveThreadsUsPerTx: { main: number; ingest: number; rest: number };
}

/**
 * Posts the first `blocks` blocks of `file` to a fresh `serve` on the empty database at `databaseUrl`;
 * `pgPid`, the postmaster's pid, adds PostgreSQL's CPU.
 */
export async function measureObserverIngest(options: {
  databaseUrl: string;
  file: string;
  blocks: number;
  pgPid?: number;
}): Promise<ObserverIngestResult> {
  const observerPort = await freePort();
  const serve = await startServe({
    databaseUrl: options.databaseUrl,
    apiPort: await freePort(),
    observerPort,
    env: { LOG_LEVEL: 'warn', OBSERVER_BODY_LIMIT_MB: '200' },
    nodeFlags: process.env.BENCH_SERVER_NODE_OPTIONS?.split(' ').filter(Boolean),
  });
  let blocks = 0;
  let messages = 0;
  let seconds: number;
  let cpu: { serve: number; postgres?: number };
  let threads: { main: number; ingest: number; rest: number };
  try {
    const threads0 = threadTicks(serve.pid);
    const serveCpu0 = processTreeCpuSeconds(serve.pid);
    const pgCpu0 = options.pgPid ? processTreeCpuSeconds(options.pgPid) : 0;
    const started = performance.now();
    for await (const message of readTsv(options.file)) {
      if (blocks === options.blocks) break;
      const res = await fetch(`http://127.0.0.1:${observerPort}${message.path}`, {
        method: 'POST',
        body: message.payload,
        headers: { 'content-type': 'application/json' },
      });
      const text = await res.text();
      if (res.status !== 200) {
        throw new Error(
          `message ${message.id} (${message.path}): observer answered ${res.status}: ${text.slice(0, 300)}`,
        );
      }
      messages++;
      if (message.path === '/new_block') blocks++;
    }
    seconds = (performance.now() - started) / 1000;
    const threads1 = threadTicks(serve.pid);
    threads = splitThreads(serve.pid, threads0, threads1);
    cpu = {
      serve: processTreeCpuSeconds(serve.pid) - serveCpu0,
      postgres: options.pgPid ? processTreeCpuSeconds(options.pgPid) - pgCpu0 : undefined,
    };
  } finally {
    await serve.kill('SIGTERM');
  }
  const db = await openDatabase({ url: options.databaseUrl, pgliteDir: 'memory://', poolMax: 1 });
  const txs = await canonicalTxCount(new Store(db)).finally(() => db.close());
  const perTx = (s: number) => Math.round((s * 1e6) / Math.max(txs, 1));
  return {
    blocks,
    messages,
    txs,
    seconds: Math.round(seconds * 10) / 10,
    txsPerSecond: Math.round(txs / seconds),
    cpuUsPerTx: {
      serve: perTx(cpu.serve),
      postgres: cpu.postgres === undefined ? undefined : perTx(cpu.postgres),
    },
    serveThreadsUsPerTx: {
      main: perTx(threads.main),
      ingest: perTx(threads.ingest),
      rest: perTx(threads.rest),
    },
  };
}

/** CPU seconds used so far by each thread of a process (Linux /proc), by thread id. */
function threadTicks(pid: number): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      seconds.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / 100); // utime + stime, USER_HZ
    } catch {
      // the thread ended meanwhile
    }
  }
  return seconds;
}

/** What each thread used between two readings: the main thread, the busiest other one, all the others. */
function splitThreads(pid: number, before: Map<number, number>, after: Map<number, number>) {
  const used = [...after].map(([tid, s]) => ({ tid, s: s - (before.get(tid) ?? 0) }));
  const main = used.find((t) => t.tid === pid)?.s ?? 0;
  const others = used.filter((t) => t.tid !== pid).sort((a, b) => b.s - a.s);
  const ingest = others[0]?.s ?? 0;
  return { main, ingest, rest: others.slice(1).reduce((sum, t) => sum + t.s, 0) };
}

async function main() {
  const { values } = parseArgs({
    options: {
      file: { type: 'string' },
      blocks: { type: 'string', default: '500' },
      durability: { type: 'string', default: 'full' },
    },
  });
  const durability = DURABILITY[values.durability];
  if (!values.file) throw new Error('--file <chain.tsv> is required (e.g. a chain in bench/out/)');
  if (!durability) throw new Error('--durability is full or off');
  const cluster = await startPostgres({
    fsync: durability.fsync,
    settings: [...SERVER_SETTINGS, ...durability.settings],
  });
  try {
    const databaseUrl = await cluster.createDatabase('bench_observer');
    const result = await measureObserverIngest({
      databaseUrl,
      file: values.file,
      blocks: Number(values.blocks),
      pgPid: postmasterPid(cluster),
    });
    console.log(JSON.stringify(result));
  } finally {
    await cluster.stop();
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  });
}

// Account reads at any history size: `npx tsx bench/accounts.ts [--txs 1000000] [--rounds 1000] [--seconds 5]`.
//
// On a throwaway PostgreSQL, indexes a chain where one "hot" principal sends --txs transactions (an STX
// transfer each, 100 per block) and a "small" principal receives 10 of them, through the indexer's real ingest
// path (the chain's /new_block messages replayed through the Ingestor, as `replay` does), so running balances,
// the principal index and its ordinals are what ingest keeps. The messages are built by the tests' chain
// builder from transactions signed by the generator's signer (on every core), and written once to
// bench/out/accounts-<txs>.tsv: later runs only replay it.
// Then the read API is served on loopback; latency is timed request by request (all URLs interleaved, one
// keep-alive connection), throughput with autocannon. Prints a Markdown table (its last run:
// bench/history/accounts.md, bench finding F-read-accounts-at-1m).
import { createWriteStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pino from 'pino';
import { KeyRing, type Account } from '../src/devnet/keys.js';
import { SignerPool } from '../src/devnet/signer-pool.js';
import { AnchorMode, encodeClearedTx, PostConditionMode, tokenTransferPayload } from '../src/devnet/wire.js';
import { Ingestor } from '../src/ingest/ingestor.js';
import { replayFile } from '../src/ingest/replay.js';
import { formatTsvLine } from '../src/protocol/tsv.js';
import { startTestApi } from '../test/support/api.js';
import { ev, TestChain, type MinedTx } from '../test/support/chain.js';
import { connectTestDatabase } from '../test/support/database.js';
import { migrate } from '../src/store/migrate.js';
import { Store } from '../src/store/store.js';
import { startPostgres } from '../test/support/postgres.js';

const { values } = parseArgs({
  options: {
    txs: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '1000' },
  },
});
const HOT_TXS = Number(values.txs);
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Number(values.rounds);
const TXS_PER_BLOCK = 100;
const BLOCKS_PER_BATCH = 50;
const SMALL_TXS = 10;
const FEE = 180;

const logger = pino({ level: 'warn' });

const keys = new KeyRing('bench-accounts');
const hotAccount = keys.add('hot');
const smallAccount = keys.add('small');
const recipients = Array.from({ length: 1000 }, (_, i) => keys.add(`recipient:${i}`));
const HOT = hotAccount.address;
const SMALL = smallAccount.address;

/** The chain's messages in a TSV file (built once per size): a block paying HOT a reward, then its transfers. */
async function accountsChain(): Promise<string> {
  const dir = join(import.meta.dirname, 'out');
  const file = join(dir, `accounts-${HOT_TXS}.tsv`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const started = performance.now();
  const chain = new TestChain();
  const out = createWriteStream(`${file}.partial`);
  let id = 0;
  const write = async (message: { path: string; body: string }) => {
    const line = formatTsvLine({
      id: String(++id),
      receivedAt: new Date(Date.UTC(2024, 0, 1) + id * 1000),
      path: message.path,
      payload: message.body,
    });
    if (!out.write(line)) await once(out, 'drain');
  };
  await write(chain.buildBlock({ minerRewards: [{ recipient: HOT, coinbase: 10 ** 12 }] }).message);
  const memo = new Uint8Array(34);
  const transfer = (to: Account) => tokenTransferPayload(to.principal, 1n, memo);
  const pool = new SignerPool(keys.material(), availableParallelism());
  try {
    const blocks = Math.ceil(HOT_TXS / TXS_PER_BLOCK);
    for (let first = 0; first < blocks; first += BLOCKS_PER_BATCH) {
      const nonces = Array.from(
        { length: Math.min(blocks - first, BLOCKS_PER_BATCH) * TXS_PER_BLOCK },
        (_, i) => first * TXS_PER_BLOCK + i,
      ).filter((nonce) => nonce < HOT_TXS);
      const to = nonces.map((n) => (n < SMALL_TXS ? smallAccount : recipients[n % recipients.length]));
      const signed = await pool.sign(
        nonces.map((nonce, i) => ({
          cleared: encodeClearedTx({
            originSigner: hotAccount.hash160,
            sponsored: false,
            anchorMode: AnchorMode.Any,
            postConditionMode: PostConditionMode.Deny,
            postConditions: [],
            payload: transfer(to[i]),
          }),
          origin: hotAccount.key,
          nonce,
          fee: FEE,
          sponsor: -1,
          sponsorNonce: 0,
          sponsorFee: 0,
        })),
      );
      const mined: MinedTx[] = signed.map((tx, i) => ({
        tx: { txid: `0x${tx.txid.toString('hex')}`, raw: `0x${tx.raw.toString('hex')}`, sender: HOT },
        events: [ev.stxTransfer(HOT, to[i].address, 1)],
      }));
      for (let at = 0; at < mined.length; at += TXS_PER_BLOCK) {
        await write(chain.buildBlock({ txs: mined.slice(at, at + TXS_PER_BLOCK) }).message);
      }
      process.stderr.write(`\rsigned ${first * TXS_PER_BLOCK + nonces.length} of ${HOT_TXS} txs   `);
    }
  } finally {
    await pool.close();
  }
  out.end();
  await once(out, 'finish');
  renameSync(`${file}.partial`, file);
  process.stderr.write(`\nwrote ${file} in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  return file;
}

/** Replays the chain into the store through the ingest path; returns the seconds it took. */
async function load(store: Store, file: string) {
  const started = performance.now();
  const ingestor = new Ingestor(store, { isMainnet: true, logger });
  await replayFile(ingestor, file, {
    onProgress: ({ stats }) => {
      if (stats.blocks % 1000 === 0) {
        const rate = Math.round((stats.blocks * TXS_PER_BLOCK) / stats.seconds);
        process.stderr.write(`\rloaded ${stats.blocks} blocks (${rate} txs/s)   `);
      }
    },
  });
  process.stderr.write('\n');
  await store.sql`ANALYZE`;
  return (performance.now() - started) / 1000;
}

interface Target {
  label: string;
  path: string;
  bytes?: number;
  /** per-request latency, ms */
  samples: number[];
  rps?: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Latency: ROUNDS rounds of one request to every target in turn (interleaved, so load from other processes
 * on a shared machine hits all targets alike), timed with a high-resolution clock over a keep-alive
 * connection. Throughput: autocannon with several connections, one target at a time.
 */
async function measure(base: string, targets: Target[], rounds: number) {
  for (const t of targets) {
    const res = await fetch(`${base}${t.path}`);
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${t.path}: ${res.status} ${body.slice(0, 200)}`);
    t.bytes = body.length;
  }
  for (let round = -Math.min(200, rounds); round < rounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const t = targets[(((i + round) % targets.length) + targets.length) % targets.length];
      const started = process.hrtime.bigint();
      const res = await fetch(`${base}${t.path}`);
      await res.arrayBuffer();
      if (round >= 0) t.samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  for (const t of targets) {
    const result = await autocannon({ url: `${base}${t.path}`, connections: CONNECTIONS, duration: SECONDS });
    t.rps = result.requests.average;
  }
}

function summary(t: Target) {
  const sorted = [...t.samples].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), mean };
}

const pg = await startPostgres();
try {
  const file = await accountsChain();
  const url = await pg.createDatabase('bench_accounts');
  const db = await connectTestDatabase(url);
  await migrate(db.sql);
  const store = new Store(db);
  try {
    const seconds = await load(store, file);
    const [{ n }] = await store.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM txs`;
    const [hot] = await store.sql<{ tx_count: number }[]>`
      SELECT tx_count FROM principal_stats WHERE principal = ${HOT}`;
    console.log(
      `\nloaded ${n} txs in ${seconds.toFixed(1)} s; ${HOT} has ${hot.tx_count} txs, ${SMALL} has 10\n`,
    );

    const { app, baseUrl: base } = await startTestApi({ store, logger, apiVersion: 'bench', listen: true });
    const offset = Math.floor(HOT_TXS * 0.9);
    const half = Math.floor(HOT_TXS / TXS_PER_BLOCK / 2);
    const twt = '/transactions_with_transfers';
    const target = (label: string, path: string): Target => ({ label, path, samples: [] });
    const hotPage = target(
      `hot: transactions_with_transfers?offset=${offset}&limit=50`,
      `/extended/v1/address/${HOT}${twt}?offset=${offset}&limit=50`,
    );
    const smallPage = target(
      'small: transactions_with_transfers?limit=50 (its 10 txs)',
      `/extended/v1/address/${SMALL}${twt}?limit=50`,
    );
    const hotBalances = target('hot: balances', `/extended/v1/address/${HOT}/balances`);
    const smallBalances = target('small: balances', `/extended/v1/address/${SMALL}/balances`);
    const hotPage10 = target(
      `hot: transactions_with_transfers?offset=${offset}&limit=10`,
      `/extended/v1/address/${HOT}${twt}?offset=${offset}&limit=10`,
    );
    const targets = [
      hotPage,
      smallPage,
      hotBalances,
      smallBalances,
      hotPage10,
      target(
        'hot: transactions_with_transfers?limit=50 (offset 0)',
        `/extended/v1/address/${HOT}${twt}?limit=50`,
      ),
      target(
        `hot: transactions_with_transfers?until_block=${half}&offset=${Math.floor(offset / 2)}&limit=50`,
        `/extended/v1/address/${HOT}${twt}?until_block=${half}&offset=${Math.floor(offset / 2)}&limit=50`,
      ),
      target(
        `small: balances?until_block=${half}`,
        `/extended/v1/address/${SMALL}/balances?until_block=${half}`,
      ),
    ];
    await measure(base, targets, ROUNDS);
    // an until_block balance of the hot principal sums its event rows: reported once, not in the rounds
    const historic = process.hrtime.bigint();
    const res = await fetch(`${base}/extended/v1/address/${HOT}/balances?until_block=${half}`);
    await res.arrayBuffer();
    const historicMs = Number(process.hrtime.bigint() - historic) / 1e6;
    // let the last load run's in-flight requests finish before closing
    await new Promise((resolve) => setTimeout(resolve, 500));
    await app.close();

    console.log(
      `| request | bytes | p50 ms | p90 ms | p99 ms | mean ms | req/s (${CONNECTIONS} connections) |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const t of targets) {
      const s = summary(t);
      console.log(
        `| ${t.label} | ${t.bytes} | ${s.p50.toFixed(2)} | ${s.p90.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.mean.toFixed(2)} | ${Math.round(t.rps ?? 0)} |`,
      );
    }
    console.log(
      `\nhot: balances?until_block=${half} (sums ${Math.floor(HOT_TXS / 2)} event rows), one request: ${historicMs.toFixed(0)} ms\n`,
    );
    for (const [a, b] of [
      [hotPage, smallPage],
      [hotBalances, smallBalances],
      [hotPage10, smallPage],
    ]) {
      const ratio = summary(a).p50 / summary(b).p50;
      const meanRatio = summary(a).mean / summary(b).mean;
      console.log(
        `${a.label} vs ${b.label}: p50 ratio ${ratio.toFixed(2)}, mean ratio ${meanRatio.toFixed(2)} (${ratio <= 2 ? 'within' : 'NOT within'} 2x)`,
      );
    }
  } finally {
    await store.close();
  }
} finally {
  await pg.stop();
}

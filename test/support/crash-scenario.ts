import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Random } from '../../src/devnet/random.js';
import type { RecordedMessage } from '../../src/protocol/tsv.js';
import type { Engine } from '../../src/store/db.js';
import { connectTestDatabase, createTestDatabaseUrl } from './database.js';
import { generatedMessages } from './delivery.js';
import { assertSameIndex, uninterruptedRun } from './digest.js';
import { freePort } from './postgres.js';
import { deliverAll, type SendStats } from './sender.js';
import { startServe, type ServeProcess } from './serve-process.js';

// Crash safety: a generated chain is posted to the live observer port of a real `serve` process by a sender
// that, like stacks-node, re-sends each message until it gets a 200. The process is killed with SIGKILL at
// seeded random points, once inside a message's open transaction (rows written, not committed) and once
// between a message's COMMIT and its 200 (the node will re-send a message that is already in); each time it
// is restarted and the sender carries on. The index must end up equal to an uninterrupted replay.
// On PostgreSQL the test also looks into the paused transaction from outside; PGlite lives inside the killed
// process (its data directory is only opened once that process is gone), so there only the outcome is checked.

export interface CrashScenarioOptions {
  /** the database `serve` runs on: a PostgreSQL database, or a PGlite directory (the `npm start` default) */
  engine: Engine;
  blocks: number;
  accounts: number;
  txsPerBlock: number;
  seed: string;
  /** SIGKILLs at random points (besides the two at the test hooks) */
  randomKills: number;
}

export interface CrashReport {
  messages: number;
  blocks: number;
  txs: number;
  /** SIGKILLs at random points, inside a transaction, and between a COMMIT and its 200 */
  randomKills: number;
  inTransactionKills: number;
  afterCommitKills: number;
  restarts: number;
  send: SendStats;
  seconds: number;
}

const PAUSED = {
  before: 'TEST_PAUSE_BEFORE_COMMIT_MS: pausing',
  after: 'TEST_PAUSE_AFTER_COMMIT_MS: pausing',
};

function indexHashOf(message: RecordedMessage): string {
  return (JSON.parse(message.payload) as { index_block_hash: string }).index_block_hash;
}

/** Distinct indexes in [from, to), sorted. */
function distinctIndexes(
  random: Random,
  count: number,
  from: number,
  to: number,
  avoid: Set<number>,
): number[] {
  const chosen = new Set<number>();
  while (chosen.size < count) {
    const i = random.int(from, to - 1);
    if (!avoid.has(i)) chosen.add(i);
  }
  return [...chosen].sort((a, b) => a - b);
}

async function runCrashScenario(options: CrashScenarioOptions): Promise<CrashReport> {
  const started = performance.now();
  const { messages, report } = await generatedMessages({
    blocks: options.blocks,
    accounts: options.accounts,
    seed: options.seed,
    txsPerBlock: options.txsPerBlock,
  });

  // The uncrashed reference: the same messages through the same ingest path, in this process.
  const reference = uninterruptedRun(messages, options.engine);
  reference.catch(() => {});

  // Where the faults go: random messages (killed a random few ms after the POST starts: before, during or
  // after its transaction), and two blocks held by the test hooks, before and after their COMMIT.
  const random = new Random(`${options.seed}:faults`);
  const n = messages.length;
  const blockFrom = (i: number) => {
    while (messages[i].path !== '/new_block') i++;
    return i;
  };
  const inTransactionAt = blockFrom(random.int(Math.floor(n * 0.3), Math.floor(n * 0.45)));
  const afterCommitAt = blockFrom(random.int(Math.floor(n * 0.55), Math.floor(n * 0.7)));
  const killAt = distinctIndexes(
    random,
    options.randomKills,
    Math.floor(n * 0.05),
    Math.floor(n * 0.95),
    new Set([inTransactionAt, afterCommitAt]),
  );
  const killDelayMs = new Map(killAt.map((i) => [i, random.int(0, 60)]));

  const pgliteDir =
    options.engine === 'pglite' ? mkdtempSync(join(tmpdir(), 'stacks-api-crash-pglite-')) : undefined;
  const databaseUrl = pgliteDir ? '' : await createTestDatabaseUrl();
  const apiPort = await freePort();
  const observerPort = await freePort();
  const start = (env: Record<string, string> = {}) =>
    startServe({
      databaseUrl,
      apiPort,
      observerPort,
      env: { ...(pgliteDir && { PGLITE_DIR: pgliteDir }), ...env },
    });

  let child: ServeProcess = await start();
  let restarts = 0;
  let randomKills = 0;
  let inTransactionKills = 0;
  let afterCommitKills = 0;
  let chaos: Promise<void> = Promise.resolve();

  const killAndRestart = async () => {
    await child.kill('SIGKILL');
    child = await start();
    restarts++;
  };

  /** Restarts the service with a pause hook on; `killed` resolves once it was killed with `message` there. */
  const killInHook = async (message: RecordedMessage, hook: 'before' | 'after') => {
    await child.kill('SIGTERM');
    child = await start({ [`TEST_PAUSE_${hook.toUpperCase()}_COMMIT_MS`]: '600000' });
    restarts++;
    const paused = child;
    const killed = (async () => {
      const line = await paused.waitForLog((l) => l.msg === PAUSED[hook], 120_000);
      assert.equal(line.path, '/new_block');
      if (pgliteDir) return killAndRestart();
      const db = await connectTestDatabase(databaseUrl);
      try {
        const [open] = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'stacks-read-api ingest'
            AND state = 'idle in transaction'`;
        const [seen] = await db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM blocks WHERE index_block_hash = ${indexHashOf(message)}`;
        if (hook === 'before') {
          assert.equal(open.n, 1, 'the observer holds its transaction open');
          assert.equal(seen.n, 0, 'the block is not visible before COMMIT');
        } else {
          assert.equal(open.n, 0, 'no transaction is open');
          assert.equal(seen.n, 1, 'the block is committed');
        }
      } finally {
        await db.close();
      }
      await killAndRestart();
    })();
    return { killed };
  };

  // The sender is not told about faults: it finds the observer gone and retries.
  const beforeSend = async (i: number, message: RecordedMessage) => {
    if (killDelayMs.has(i) || i === inTransactionAt || i === afterCommitAt) await chaos;
    if (killDelayMs.has(i)) {
      chaos = (async () => {
        await new Promise((resolve) => setTimeout(resolve, killDelayMs.get(i)));
        randomKills++;
        await killAndRestart();
      })();
    } else if (i === inTransactionAt) {
      chaos = (await killInHook(message, 'before')).killed.then(() => void inTransactionKills++);
    } else if (i === afterCommitAt) {
      chaos = (await killInHook(message, 'after')).killed.then(() => void afterCommitKills++);
    }
  };

  let send: SendStats;
  try {
    send = await deliverAll(messages, { url: () => `http://127.0.0.1:${observerPort}`, beforeSend });
    await chaos;
  } finally {
    await chaos.catch(() => {});
    await child.kill('SIGTERM');
  }

  try {
    await assertSameIndex(pgliteDir ? { pgliteDir } : { url: databaseUrl }, reference);
  } finally {
    if (pgliteDir) rmSync(pgliteDir, { recursive: true, force: true });
  }
  return {
    messages: n,
    blocks: report.paths['/new_block'] ?? 0,
    txs: report.canonicalTxs,
    randomKills,
    inTransactionKills,
    afterCommitKills,
    restarts,
    send,
    seconds: (performance.now() - started) / 1000,
  };
}

/** The chain length and random kills of a crash-safety run (20 txs a block). */
export interface CrashSize {
  blocks: number;
  randomKills: number;
}

/** What a crash-safety test is called, at `size` on `engine`. */
export const crashSafetyTitle = (engine: Engine, { blocks }: CrashSize) =>
  `crash safety at ~${(blocks * 20).toLocaleString('en')} txs (${engine}): SIGKILLs while a chain is posted lose and double nothing`;

/** Runs the scenario above at `size` on `engine` and checks its report. */
export async function assertCrashSafe(engine: Engine, { blocks, randomKills }: CrashSize) {
  const report = await runCrashScenario({
    engine,
    blocks,
    accounts: 500,
    txsPerBlock: 20,
    seed: 'crash-soak',
    randomKills,
  });
  console.log(`crash safety (${engine}): ${JSON.stringify(report)}`);
  assert.equal(report.randomKills, randomKills);
  assert.equal(report.inTransactionKills, 1);
  assert.equal(report.afterCommitKills, 1);
  assert.ok(report.txs >= blocks * 18, `${report.txs} txs`);
  // The message killed inside its transaction was rolled back: its re-delivery applied it. The one killed after
  // its COMMIT was already in: its re-delivery was a duplicate.
  assert.ok((report.send.outcomesAfterRetry.applied ?? 0) >= 1, JSON.stringify(report.send));
  assert.ok((report.send.outcomesAfterRetry.duplicate ?? 0) >= 1, JSON.stringify(report.send));
}

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Random } from '../../src/devnet/random.js';
import { Store } from '../../src/store/store.js';
import { familySample, normalize } from '../conformance/harness.js';
import { freshApiServer, get, startTestApi, type TestApi } from '../support/api.js';
import { connectTestDatabase, createTestDatabaseUrl, stopOwnCluster } from '../support/database.js';
import { assertSameIndex, indexSnapshot } from '../support/digest.js';
import { freePort } from '../support/postgres.js';
import { deliver, newSendStats, type SendStats } from '../support/sender.js';
import { sleep, startServe, type ServeProcess } from '../support/serve-process.js';
import { fixtureMessages } from '../support/shared.js';

// The ingest connection killed under live ingest: a real `serve` process takes a generated chain from a
// retrying sender on its observer port while the test terminates its ingest backend (pg_terminate_backend:
// what a backend crash, a proxy's idle cut or a failover do to the connection) at seeded random points, 30
// times. Each kill may fail one message (500, re-sent); none may commit a message's raw-log row without its
// rows, leave the chain stuck, or hang the worker. At the end the tables, the applied-message log and every
// endpoint family's answers equal those of a clean ingest of the same chain. Once without the test pause,
// the kills landing wherever the message happens to be; once with it, each kill inside a message's open
// transaction, where its callback outlives the connection.

after(stopOwnCluster);

const CHAIN = 'generated/gen-small';
/** golden paths asked of both APIs per endpoint family, spread over the chain */
const PATHS_PER_FAMILY = 25;

/** Where a kill found the ingest backend (pg_stat_activity), by state and statement. */
type Landings = Record<string, number>;

interface KillReport {
  kills: number;
  landings: Landings;
  send: SendStats;
  /** ms from each kill to the next 200 the observer answered */
  recoveryMs: { median: number; max: number };
  seconds: number;
}

/** Terminates the ingest backend, if it has one now; what it was doing, or null. */
async function terminateIngest(admin: Store): Promise<string | null> {
  const [row] = await admin.sql<{ state: string; query: string; terminated: boolean }[]>`
    SELECT state, query, pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = 'stacks-read-api ingest'`;
  if (!row?.terminated) return null;
  const statement = /^\s*(\w+(?: INTO \w+)?)/i.exec(row.query)?.[1] ?? '?';
  return `${row.state}: ${statement.replace(/\s+/g, ' ')}`;
}

/** A stretch of the chain posted to one `serve` process, and the kills while it is posted. */
interface Phase {
  /** messages [from, to) of the chain */
  from: number;
  to: number;
  kills: number;
  /** TEST_PAUSE_BEFORE_COMMIT_MS of the process: each kill then waits for a message to reach the pause */
  pauseMs: number;
}

/**
 * Posts the chain, phase by phase (a `serve` each, on one database), while killing its ingest connection:
 * each kill a random few ms after a randomly chosen message began, or after it reached the test pause.
 */
async function killWhileIngesting(seed: string, phases: Phase[]) {
  const started = performance.now();
  const messages = fixtureMessages(CHAIN);
  const random = new Random(seed);
  const databaseUrl = await createTestDatabaseUrl();
  const apiPort = await freePort();
  const observerPort = await freePort();
  const admin = new Store(await connectTestDatabase(databaseUrl));
  const landings: Landings = {};
  const killTimes: number[] = [];
  const answerTimes: number[] = [];
  const send = newSendStats();
  // A node re-sends soon: the re-sent message's transaction then starts while the killed one's work still runs.
  const sending = {
    url: () => `http://127.0.0.1:${observerPort}`,
    giveUpAfterMs: 20_000,
    attemptTimeoutMs: 10_000,
    retryDelayMs: 10,
  };
  try {
    for (const phase of phases) {
      const env: Record<string, string> = phase.pauseMs
        ? { TEST_PAUSE_BEFORE_COMMIT_MS: String(phase.pauseMs) }
        : {};
      const service: ServeProcess = await startServe({ databaseUrl, apiPort, observerPort, env });
      const killAt = new Set<number>();
      while (killAt.size < phase.kills) killAt.add(random.int(phase.from, phase.to - 1));
      let kill: Promise<void> = Promise.resolve();
      try {
        for (let i = phase.from; i < phase.to; i++) {
          if (killAt.has(i)) {
            const delayMs = random.int(0, phase.pauseMs || 40);
            const logsBefore = service.logs.length;
            kill = (async () => {
              if (phase.pauseMs) {
                await service.waitForLog(
                  (l) =>
                    service.logs.indexOf(l) >= logsBefore && l.msg === 'TEST_PAUSE_BEFORE_COMMIT_MS: pausing',
                );
              }
              await sleep(delayMs);
              // The backend may be between two connections (reconnecting after the last kill): try again.
              for (let tries = 0; tries < 100; tries++) {
                const landed = await terminateIngest(admin);
                if (landed) {
                  killTimes.push(performance.now());
                  landings[landed] = (landings[landed] ?? 0) + 1;
                  return;
                }
                await sleep(5);
              }
            })();
          }
          // A stuck chain shows as a message never accepted (a 409 fails at once, a hang after 20 s).
          await deliver(messages[i], sending, send);
          answerTimes.push(performance.now());
          await kill;
        }
        assert.equal(service.child.exitCode, null, 'the service did not exit');
      } finally {
        await service.kill('SIGTERM');
      }
    }
  } finally {
    await admin.close();
  }
  // (a kill after the last message's answer has nothing to recover)
  const recovery = killTimes
    .flatMap((k) =>
      answerTimes
        .filter((a) => a >= k)
        .slice(0, 1)
        .map((a) => a - k),
    )
    .sort((a, b) => a - b);
  const report: KillReport = {
    kills: killTimes.length,
    landings,
    send,
    recoveryMs: {
      median: Math.round(recovery[Math.floor(recovery.length / 2)]),
      max: Math.round(recovery[recovery.length - 1]),
    },
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
  return { databaseUrl, report };
}

/** Every endpoint family answers on the killed run's database as on a clean ingest of the chain. */
async function assertSameAnswers(databaseUrl: string, clean: TestApi): Promise<number> {
  const killed = new Store(await connectTestDatabase(databaseUrl));
  const app = await freshApiServer(killed);
  try {
    const paths = familySample(CHAIN, PATHS_PER_FAMILY);
    for (const path of paths) {
      const [ours, reference] = await Promise.all([get(app, path), get(clean.app, path)]);
      assert.equal(ours.statusCode, reference.statusCode, path);
      const body = (res: typeof ours) => (res.body.length ? normalize(path, res.json()) : null);
      assert.deepEqual(body(ours), body(reference), path);
    }
    return paths.length;
  } finally {
    await app.close();
    await killed.close();
  }
}

describe('the ingest connection killed under live ingest (postgres)', () => {
  test('30 backend terminations while a chain is posted: nothing half-written, never stuck, same answers', async () => {
    // The clean ingest of the same chain, in this process meanwhile.
    const cleanApi = startTestApi({ engine: 'postgres', fixture: CHAIN });
    cleanApi.catch(() => {});
    // First inside messages' open transactions, their work held by the test pause; then, without it, wherever
    // the message happens to be (a statement running, between two, committing, between messages).
    const { databaseUrl, report } = await killWhileIngesting('connection-kill', [
      { from: 0, to: 50, kills: 10, pauseMs: 120 },
      { from: 50, to: fixtureMessages(CHAIN).length, kills: 20, pauseMs: 0 },
    ]);
    console.log(`connection kills: ${JSON.stringify(report)}`);
    const clean = await cleanApi;
    try {
      assert.ok(report.kills >= 30, `${report.kills} kills`);
      // Each kill that met a message failed it (500, re-sent), and nothing else: no 409, no refusal.
      assert.deepEqual(Object.keys(report.send.failures), ['500']);
      await assertSameIndex({ url: databaseUrl }, indexSnapshot(clean.store.sql));
      const asked = await assertSameAnswers(databaseUrl, clean);
      assert.ok(asked >= 150, `${asked} endpoint answers compared`);
    } finally {
      await clean.close();
    }
  });
});

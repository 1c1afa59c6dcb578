import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import type { RecordedMessage } from '../../src/protocol/tsv.js';
import { CHAIN_STATE_TTL_MS } from '../../src/store/read/chain-state.js';
import { stopOwnCluster } from '../support/database.js';
import { generatedMessages } from '../support/delivery.js';
import { assertSameIndex, uninterruptedRun } from '../support/digest.js';
import { freePort, startPostgres } from '../support/postgres.js';
import { deliverAll } from '../support/sender.js';
import { sleep, startServe } from '../support/serve-process.js';

// Database outage under load: a real `serve` process ingests a generated chain from a retrying sender while
// clients read from it; its PostgreSQL is stopped twice (a clean `fast` shutdown, then an `immediate` one
// that needs crash recovery) and started again. Meanwhile the API answers 503 within a second (never another
// 5xx, never a hang) and the observer answers 5xx so the sender retries; afterwards both recover without a
// restart of the service, and the index equals an uninterrupted replay.

after(stopOwnCluster);

const OUTAGE_MS = 4_000;
const MEMPOOL_URLS = ['/extended/v2/mempool/fees', '/extended/v1/tx/mempool/stats'];

interface Sample {
  url: string;
  start: number;
  ms: number;
  status: number;
}

interface Window {
  mode: 'fast' | 'immediate';
  /** stop requested, server down, start requested, server up (ms, performance.now) */
  stopping: number;
  down: number;
  starting: number;
  up: number;
}

describe('PostgreSQL outage under load (postgres)', () => {
  test('API 503 within 1 s, observer 5xx, both recover without a restart, nothing lost', async (t) => {
    // Acknowledged commits must survive an immediate shutdown: synchronous commit on for this cluster.
    const pg = await startPostgres({ settings: ['synchronous_commit=on'] });
    t.after(() => pg.stop()); // also when an assertion fails
    const { messages, report } = await generatedMessages({
      blocks: 60,
      accounts: 40,
      seed: 'db-outage',
      txsPerBlock: 20,
    });
    const reference = uninterruptedRun(messages);
    reference.catch(() => {});

    const databaseUrl = await pg.createDatabase('outage');
    const apiPort = await freePort();
    const observerPort = await freePort();
    // The production DB_CONNECT_TIMEOUT_MS (400): while the server is down a request waits about two
    // connection attempts before its 503 (measured: ~2 s at 1000 ms, ~1 s at 500).
    const env = { DB_CONNECT_TIMEOUT_MS: String(loadConfig({}).DB_CONNECT_TIMEOUT_MS) };
    const service = await startServe({ databaseUrl, apiPort, observerPort, env });
    let reading = true;
    try {
      // Clients: a realistic mix of reads, 4 at a time, each timed by the client (10 s = a hang).
      const urls = [
        '/extended/v2/blocks/latest',
        ...MEMPOOL_URLS,
        `/extended/v1/address/${report.sample.busyAddress}/balances`,
        `/extended/v1/address/${report.sample.busyAddress}/transactions_with_transfers?limit=20`,
        `/extended/v1/tx/${report.sample.txId}`,
        `/extended/v2/smart-contracts/status?contract_id=${report.sample.tokenContract}`,
        '/extended/v2/blocks/5',
      ];
      const samples: Sample[] = [];
      const reader = async (k: number) => {
        for (let i = k; reading; i++) {
          const url = urls[i % urls.length];
          const start = performance.now();
          let status = 0;
          try {
            const res = await fetch(`http://127.0.0.1:${apiPort}${url}`, {
              signal: AbortSignal.timeout(10_000),
            });
            await res.arrayBuffer();
            status = res.status;
          } catch {
            status = -1;
          }
          samples.push({ url, start, ms: performance.now() - start, status });
          await sleep(5);
        }
      };
      const readers = [0, 1, 2, 3].map((k) => reader(k));

      // Two outages, while the sender is a third and two thirds through the chain.
      const windows: Window[] = [];
      let chaos: Promise<void> = Promise.resolve();
      const outage = async (mode: Window['mode']) => {
        const stopping = performance.now();
        await pg.halt(mode);
        const down = performance.now();
        await sleep(OUTAGE_MS);
        const starting = performance.now();
        await pg.start();
        windows.push({ mode, stopping, down, starting, up: performance.now() });
      };
      const at = new Map<number, Window['mode']>([
        [Math.floor(messages.length / 3), 'fast'],
        [Math.floor((messages.length * 2) / 3), 'immediate'],
      ]);
      const beforeSend = async (i: number, _m: RecordedMessage) => {
        const mode = at.get(i);
        if (!mode) return;
        await chaos;
        chaos = outage(mode);
      };
      const send = await deliverAll(messages, {
        url: () => `http://127.0.0.1:${observerPort}`,
        beforeSend,
        giveUpAfterMs: 90_000,
      }).catch(async (err: Error) => {
        await chaos; // an outage that failed to end says why
        const lastErrors = service.logs.filter((l) => l.level >= 50).slice(-2);
        throw new Error(
          `${err.message}; service: exit ${service.child.exitCode ?? service.child.signalCode ?? 'none'}, ` +
            `last logs ${JSON.stringify(service.logs.slice(-4)).slice(0, 2_000)}, ` +
            `last errors ${JSON.stringify(lastErrors).slice(0, 1_500)}, stderr ${service.stderr().slice(-1_500)}`,
        );
      });
      await chaos;
      await sleep(1_000);
      reading = false;
      await Promise.all(readers);

      // The service never restarted.
      assert.equal(service.child.exitCode, null);
      assert.equal(service.child.signalCode, null);

      // API: during each outage every answer is a 503 within a second; never another 5xx, never a hang.
      const statuses = new Map<number, number>();
      for (const s of samples) statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1);
      const bad = samples.filter((s) => s.status === -1 || (s.status >= 500 && s.status !== 503));
      assert.deepEqual(bad, [], 'no hang, no 5xx but 503');
      const unavailable = samples.filter((s) => s.status === 503);
      const slowest503 = Math.max(...unavailable.map((s) => s.ms));
      const t0 = samples[0].start;
      const rel = (t: number) => Math.round(t - t0);
      const context = () =>
        `slow answers ${JSON.stringify(
          samples.filter((s) => s.ms > 500).map((s) => ({ ...s, start: rel(s.start), ms: Math.round(s.ms) })),
        )}; windows ${JSON.stringify(windows.map((w) => ({ ...w, stopping: rel(w.stopping), down: rel(w.down), starting: rel(w.starting), up: rel(w.up) })))}`;
      // While the server is down, the 503 comes within a second (the slack on the slowest is for a shared
      // 2-core machine, where even a 200 may take a second under load). While it
      // comes back (crash recovery, backends starting on a busy machine) answers may take longer: they are
      // 503 or 200, never a hang (the readers give up at 10 s, counted as -1 above).
      const whileDown = unavailable
        .filter((s) => windows.some((w) => s.start >= w.down && s.start < w.starting))
        .map((s) => s.ms)
        .sort((a, b) => a - b);
      const p90Down = whileDown[Math.floor(whileDown.length * 0.9)];
      assert.ok(p90Down < 1_000, `p90 of 503s while down: ${Math.round(p90Down)} ms; ${context()}`);
      assert.ok(
        whileDown[whileDown.length - 1] < 1_500,
        `slowest 503 while down: ${Math.round(whileDown[whileDown.length - 1])} ms; ${context()}`,
      );
      // Every route read here may answer from memory while the chain state read last is trusted
      // (CHAIN_STATE_TTL_MS after that read started, before the server went down): the mempool aggregates, and
      // the answers cached by src/api/cache/answer-cache.ts (blocks by height and latest, balances, listings,
      // contract statuses, a tx by id). A 200 then is as fresh as any answer is while the database is up, not
      // a failure to notice the outage. Every other answer while down is a 503.
      const fromMemory = (s: Sample, w: Window) => s.status === 200 && s.start < w.down + CHAIN_STATE_TTL_MS;
      const recovery: number[] = [];
      let servedFromMemory = 0;
      for (const w of windows) {
        const during = samples.filter((s) => s.start >= w.down && s.start + s.ms <= w.starting);
        assert.ok(during.length >= 10, `${w.mode}: ${during.length} requests while down`);
        const served = during.filter((s) => fromMemory(s, w));
        servedFromMemory += served.length;
        assert.deepEqual(
          during
            .filter((s) => s.status !== 503 && !served.includes(s))
            .map((s) => ({ url: s.url, status: s.status, sinceDown: Math.round(s.start - w.down) })),
          [],
          `${w.mode}: answers while down`,
        );
        // Recovers: reads succeed again soon after the server is back.
        const firstOk = samples.find((s) => s.start >= w.up && s.status === 200);
        assert.ok(firstOk, `${w.mode}: a 200 after the restart`);
        recovery.push(firstOk.start + firstOk.ms - w.up);
        assert.ok(
          recovery[recovery.length - 1] < 5_000,
          `${w.mode}: recovered in ${recovery[recovery.length - 1]} ms`,
        );
      }

      // Observer: it answered 5xx while the database was down, so the sender retried, and all got in.
      const serverErrors = Object.entries(send.failures)
        .filter(([status]) => Number(status) >= 500)
        .reduce((n, [, c]) => n + c, 0);
      assert.ok(serverErrors > 0, JSON.stringify(send.failures));
      assert.deepEqual(
        Object.keys(send.failures).filter((status) => Number(status) < 500),
        [],
        'the observer stayed up: no refused connections, no 4xx',
      );
      assert.equal(send.messages, messages.length);

      console.log(
        `db outage: ${messages.length} messages (${report.canonicalTxs} txs), ${windows.length} outages ` +
          `(${windows.map((w) => `${w.mode} ${Math.round(w.starting - w.down)} ms down`).join(', ')}); ` +
          `API ${samples.length} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}, ` +
          `503s while down: p90 ${Math.round(p90Down)} ms (${servedFromMemory} answers from memory), slowest ${Math.round(whileDown[whileDown.length - 1])} ms; slowest 503 overall ${Math.round(slowest503)} ms; first 200 after restart ${recovery.map((r) => Math.round(r)).join(' / ')} ms; ` +
          `observer: ${serverErrors} 5xx answers, ${send.resent} re-sends of ${send.retriedMessages} messages, ` +
          `outcomes after retry ${JSON.stringify(send.outcomesAfterRetry)}`,
      );
    } finally {
      // also when the run fails midway: readers still looping would keep this test process alive for good
      reading = false;
      await service.kill('SIGTERM');
    }

    // Nothing lost, nothing doubled.
    await assertSameIndex({ url: databaseUrl }, reference);
  });
});

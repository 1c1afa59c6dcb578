import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { migrate } from '../../src/store/migrate.js';
import { CHAIN_STATE_TTL_MS } from '../../src/store/read/chain-state.js';
import { Store } from '../../src/store/store.js';
import { familySample } from '../conformance/harness.js';
import { connectTestDatabase } from '../support/database.js';
import { ingestMessages } from '../support/delivery.js';
import { freePort, startPostgres } from '../support/postgres.js';
import { sleep, startServe, type ServeProcess } from '../support/serve-process.js';
import { fixtureMessages } from '../support/shared.js';

// A database that times statements out: the server's statement_timeout set to 1 ms under a running `serve`
// (a cluster of this test's own: the setting is the whole server's). Its reads used to answer 500 "An internal
// error" (SQLSTATE 57014 was not mapped), others 500 with a TypeError, then the process died on an uncaught
// TypeError: a statement cancelled while its rows came left postgres.js's row counter behind, and the next
// query on the connection resolved with its first row missing. Now every failure is a 503 saying the database
// did not answer in time, the process stays up, and every answer is 200 again once the setting is back.

const CHAIN = 'generated/gen-small';
const TIMED_OUT = {
  statusCode: 503,
  error: 'Service Unavailable',
  message: 'The database did not answer in time',
};

interface Answer {
  path: string;
  status: number;
  body: unknown;
}

/** The answer to one request; status 0 when none came (the process died: the test says so below). */
async function ask(base: string, path: string, init?: RequestInit): Promise<Answer> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(20_000) });
    text = await res.text();
  } catch (err) {
    return { path, status: 0, body: (err as Error).message };
  }
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // kept as text: the assertion shows it
  }
  return { path, status: res.status, body };
}

/** Every path, `clients` at a time, as a load balancer's clients would. */
async function askAll(base: string, paths: string[], clients = 8): Promise<Answer[]> {
  const answers: Answer[] = new Array<Answer>(paths.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < paths.length; i = next++) answers[i] = await ask(base, paths[i]);
    }),
  );
  return answers;
}

/** Sets the server's statement_timeout (null: back to its default) and waits until new sessions see it. */
async function setStatementTimeout(admin: Store, value: string | null): Promise<void> {
  if (value === null) await admin.sql`ALTER SYSTEM RESET statement_timeout`;
  else await admin.sql.unsafe(`ALTER SYSTEM SET statement_timeout = '${value}'`);
  await admin.sql`SELECT pg_reload_conf()`;
  // each backend reloads before its next statement; the test's own session keeps no limit
  await sleep(300);
  await admin.sql`SET statement_timeout = 0`;
}

describe('statement_timeout on the database (postgres)', () => {
  test('every endpoint family: 503 with the JSON body while statements time out, the process stays up, 200 after', async (t) => {
    const pg = await startPostgres();
    t.after(() => pg.stop());
    const databaseUrl = await pg.createDatabase('timeouts');
    const admin = new Store(await connectTestDatabase(databaseUrl));
    t.after(() => admin.close());
    await migrate(admin.sql);
    await ingestMessages(admin, fixtureMessages(CHAIN));
    const apiPort = await freePort();
    const observerPort = await freePort();
    const service: ServeProcess = await startServe({ databaseUrl, apiPort, observerPort });
    t.after(() => service.kill('SIGTERM'));
    const api = `http://127.0.0.1:${apiPort}`;
    const paths = ['/extended', '/extended/v2/blocks/latest', ...familySample(CHAIN, 20)];

    // 1. statement_timeout 1 ms: many statements still finish in time, the others are cancelled.
    await setStatementTimeout(admin, '1ms');
    const underTimeout = [...(await askAll(api, paths)), ...(await askAll(api, paths))];

    // 2. Every statement held past it: the test locks every table, so none can finish in time.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holding = admin.sql.begin(async (tx) => {
      const tables = await tx<{ name: string }[]>`
        SELECT format('%I', tablename) AS name FROM pg_tables WHERE schemaname = current_schema()`;
      await tx.unsafe(`LOCK TABLE ${tables.map((r) => r.name).join(', ')} IN ACCESS EXCLUSIVE MODE`);
      locked();
      await released;
    });
    holding.catch(() => {});
    await lockTaken;
    // answers cached in memory are served while the chain state read last is trusted (read/chain-state.ts)
    await sleep(CHAIN_STATE_TTL_MS * 2);
    let held: Answer[];
    let observer: Answer;
    try {
      held = await askAll(api, paths);
      // the observer too: the node is told to re-send (500, never a 4xx), in the same JSON shape
      const [message] = fixtureMessages(CHAIN);
      observer = await ask(`http://127.0.0.1:${observerPort}`, message.path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: message.payload,
      });
    } finally {
      release();
      await holding;
    }

    // 3. The setting back: every answer as the chain says.
    await setStatementTimeout(admin, null);
    const after = await askAll(api, paths);

    assert.equal(service.child.exitCode, null, `the service exited: ${service.stderr()}`);
    assert.equal(service.child.signalCode, null);
    // After: nothing but the chain's answers (the sample holds a few 404s and 400s of the original API).
    assert.deepEqual(
      after.filter((a) => a.status >= 500),
      [],
    );
    const afterByPath = new Map(after.map((a) => [a.path, a]));
    // Under the 1 ms timeout: each answer is the right one, or the 503 saying why.
    const timedOut = underTimeout.filter((a) => a.status === 503);
    for (const answer of underTimeout) {
      if (answer.status === 503) assert.deepEqual(answer.body, TIMED_OUT, answer.path);
      else assert.deepEqual(answer, afterByPath.get(answer.path), answer.path);
    }
    assert.ok(timedOut.length > 0, 'some statements timed out at 1 ms');
    // Held past the timeout: every family answers the 503.
    assert.deepEqual(
      held.filter((a) => a.status !== 503 || JSON.stringify(a.body) !== JSON.stringify(TIMED_OUT)),
      [],
    );
    assert.equal(observer.status, 500);
    assert.deepEqual(Object.keys(observer.body as object), ['statusCode', 'error', 'message']);
    console.log(
      `statement timeout: ${paths.length} paths; at 1 ms ${timedOut.length} of ${underTimeout.length} answers ` +
        `were 503, the rest right; all ${held.length} 503 while held; ${after.length} right after`,
    );
  });
});

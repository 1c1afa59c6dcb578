import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/store/db.js';
import { connectTestDatabase, createTestDatabaseUrl, stopOwnCluster } from '../support/database.js';

// A connection lost under a query must fail that query, and only that: never leave a later query waiting
// forever, never throw where no caller can catch it (which ends the whole service). postgres.js 3.4.9 did both.
// The clean-clone CI run of e7300f9 saw four reads hang 10 s into a database outage (most likely a query sent
// between a connection's error event and its close, never settled); a local run of that test saw the service
// die with `TypeError: Cannot read properties of null (reading 'write')` (the rollback of a transaction whose
// connection had died, written to no socket). It also retried, forever, a server that closes every connection
// during startup. patches/postgres+3.4.9.patch (applied by `npm install` and `npm ci`) fixes these; each test
// here fails without it (porsager/postgres issues 1154, 1193 and 1208 report the same).
// A transaction whose connection died was the worst of these: postgres.js rejects it at once, but its callback
// runs on, and its later statements, its COMMIT included, went to the same connection once the pool had
// reconnected it for the next transaction. Live ingest then committed a message's raw-log row without the
// message, and waited forever on a connection the pool had taken back.

after(stopOwnCluster);

/** The production client (store/db.ts: its connect timeout, backoff and prepared statements), one connection. */
async function openProductionClient(url: string): Promise<Database> {
  return openDatabase({ url, pgliteDir: '', poolMax: 1 });
}

/** Settles with what `promise` settled with, or 'still waiting' after `ms`. */
async function outcomeWithin(promise: Promise<unknown>, ms: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const waiting = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
  const settled = promise.then(
    (value) => `resolved ${JSON.stringify(value)}`,
    (err: { code?: string }) => `rejected ${err.code}`,
  );
  try {
    return await Promise.race([settled, waiting]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a lost database connection (postgres)', () => {
  test('queries sent on a connection after it failed are failed, not left waiting', async () => {
    const url = await createTestDatabaseUrl();
    const db = await openProductionClient(url);
    const admin = await connectTestDatabase(url);
    try {
      // A reserved connection, so that every query goes to the dead one: a pooled query meets the same fate
      // when it is sent between the connection's error and its close (the pool still counts it as busy then),
      // which is what a loaded machine cannot be made to do on cue.
      const reserved = await db.sql.reserve();
      const [{ pid }] = await reserved<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      await admin.sql`SELECT pg_terminate_backend(${pid})`;
      const first = await outcomeWithin(reserved`SELECT 1 AS answer`, 3_000);
      // Without the patch: left waiting (sent after the error event, before the close), or the process died
      // (sent after the close: a write to no socket, thrown from a timer).
      const second = await outcomeWithin(reserved`SELECT 2 AS answer`, 3_000);
      // Not released: the pool already took the closed connection back to reconnect it (a release would list it
      // as open again; src/ never reserves a connection, `begin` hands it back by itself).
      assert.match(first, /^rejected /);
      assert.match(second, /^rejected /);
      // and the pool recovers: a new connection answers
      assert.equal((await db.sql<{ answer: number }[]>`SELECT 3 AS answer`)[0].answer, 3);
    } finally {
      await Promise.all([db.close(), admin.close()]);
    }
  });

  test('a read-only transaction whose connection dies rejects, and the process lives on', async () => {
    const url = await createTestDatabaseUrl();
    const db = await openProductionClient(url);
    const admin = await connectTestDatabase(url);
    try {
      const [{ pid }] = await db.sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      // The mempool aggregates' shape (store/read/mempool.ts): a statement in a READ ONLY transaction.
      const transaction = db.sql.begin('READ ONLY', async (tx) => tx`SELECT pg_sleep(5)`);
      // watched from now: on a loaded machine it may fail before the terminating statement has answered
      const outcome = outcomeWithin(transaction, 4_000);
      await sleep(100);
      await admin.sql`SELECT pg_terminate_backend(${pid})`;
      assert.match(await outcome, /^rejected /);
      // The rollback postgres.js then sends on the dead connection used to throw from a timer a moment later
      // and end the process (this test file with it).
      await sleep(200);
      assert.equal((await db.sql<{ answer: number }[]>`SELECT 4 AS answer`)[0].answer, 4);
    } finally {
      await Promise.all([db.close(), admin.close()]);
    }
  });

  test('a transaction whose connection dies: its later statements and its commit fail, never reaching the next transaction', async () => {
    const url = await createTestDatabaseUrl();
    const db = await openProductionClient(url);
    const admin = await connectTestDatabase(url);
    try {
      await db.sql`CREATE TABLE written (v text)`;
      let resume!: () => void;
      const held = new Promise<void>((resolve) => (resume = resolve));
      let pid = 0;
      let late: Promise<string> = Promise.resolve('not sent');
      // The first transaction's work goes on after its connection died (the ingest test pause, or work
      // between two statements): the pool meanwhile reconnects the same connection for the next one.
      const first = db.sql.begin(async (tx) => {
        [{ pid }] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
        await tx`INSERT INTO written VALUES ('first, before the loss')`;
        await held;
        late = outcomeWithin(tx`INSERT INTO written VALUES ('first, after the loss')`, 3_000);
        await late;
      });
      const firstOutcome = outcomeWithin(first, 3_000);
      while (pid === 0) await sleep(5);
      await admin.sql`SELECT pg_terminate_backend(${pid})`;
      assert.equal(await firstOutcome, 'rejected CONNECTION_CLOSED');
      const second = db.sql.begin(async (tx) => {
        await tx`INSERT INTO written VALUES ('second, then rolled back')`;
        resume();
        // the first transaction's late statement and its commit (or rollback) are sent now
        await late;
        await sleep(50);
        await tx`INSERT INTO written VALUES ('second, also rolled back')`;
        throw new Error('rolled back');
      });
      // Without the patch the first's statement ran inside the second transaction and its COMMIT committed
      // it half-way; the second then hung (its connection handed back to the pool) or ran in autocommit.
      assert.equal(await outcomeWithin(second, 3_000), 'rejected undefined');
      assert.equal(await late, 'rejected CONNECTION_CLOSED');
      assert.deepEqual([...(await db.sql`SELECT v FROM written`)], []);
    } finally {
      await Promise.all([db.close(), admin.close()]);
    }
  });

  test('a dead transaction cannot write in autocommit on the connection a pool query reconnected', async () => {
    const url = await createTestDatabaseUrl();
    const db = await openProductionClient(url);
    const admin = await connectTestDatabase(url);
    try {
      await db.sql`CREATE TABLE written (v text)`;
      let resume!: () => void;
      const held = new Promise<void>((resolve) => (resume = resolve));
      let pid = 0;
      let sent!: (outcome: Promise<string>) => void;
      const late = new Promise<Promise<string>>((resolve) => (sent = resolve));
      const transaction = db.sql.begin(async (tx) => {
        [{ pid }] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
        await held;
        const outcome = outcomeWithin(tx`INSERT INTO written VALUES ('after the loss')`, 3_000);
        sent(outcome);
        await outcome;
      });
      const outcome = outcomeWithin(transaction, 3_000);
      while (pid === 0) await sleep(5);
      await admin.sql`SELECT pg_terminate_backend(${pid})`;
      assert.equal(await outcome, 'rejected CONNECTION_CLOSED');
      // A query of the pool (ingest's background ANALYZE is one) reconnects the connection at once.
      assert.equal((await db.sql<{ answer: number }[]>`SELECT 6 AS answer`)[0].answer, 6);
      resume();
      // Without the patch the insert ran in autocommit on the new socket: committed, alone.
      assert.equal(await await late, 'rejected CONNECTION_CLOSED');
      assert.deepEqual([...(await db.sql`SELECT v FROM written`)], []);
    } finally {
      await Promise.all([db.close(), admin.close()]);
    }
  });

  test('statements a transaction queued behind a busy connection fail when it dies, none waits', async () => {
    const url = await createTestDatabaseUrl();
    const db = await openProductionClient(url);
    const admin = await connectTestDatabase(url);
    try {
      let pid = 0;
      const statements: Promise<string>[] = [];
      const transaction = db.sql.begin(async (tx) => {
        [{ pid }] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
        // A statement with parameters not prepared yet on this connection is described first, and the
        // statements sent after it wait in the transaction's own queue until it answers.
        statements.push(outcomeWithin(tx`SELECT pg_sleep(${5})`, 4_000));
        statements.push(outcomeWithin(tx`SELECT ${1}::int AS queued`, 4_000));
        statements.push(outcomeWithin(tx`SELECT ${2}::int AS queued`, 4_000));
        await Promise.all(statements);
      });
      const outcome = outcomeWithin(transaction, 4_000);
      while (pid === 0) await sleep(5);
      await sleep(100);
      await admin.sql`SELECT pg_terminate_backend(${pid})`;
      assert.equal(await outcome, 'rejected CONNECTION_CLOSED');
      assert.deepEqual(await Promise.all(statements), Array(3).fill('rejected CONNECTION_CLOSED'));
      assert.equal((await db.sql<{ answer: number }[]>`SELECT 5 AS answer`)[0].answer, 5);
    } finally {
      await Promise.all([db.close(), admin.close()]);
    }
  });

  test('a server that closes every connection during startup: the query fails within the connect timeout', async () => {
    // What a server shutting down, or a proxy in front of a stopped one, may do: accept, then close without a word.
    const accepted: Socket[] = [];
    const server = createServer((socket) => {
      accepted.push(socket);
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const db = await openDatabase({ url: `postgres://u@127.0.0.1:${port}/db`, pgliteDir: '', poolMax: 1 });
    try {
      const started = performance.now();
      assert.equal(await outcomeWithin(db.sql`SELECT 1`, 3_000), 'rejected CONNECTION_CLOSED');
      const ms = performance.now() - started;
      // the production connect timeout is 400 ms (DB_CONNECT_TIMEOUT_MS); the slack is for a loaded machine
      assert.ok(ms < 2_000, `failed after ${Math.round(ms)} ms`);
      assert.ok(accepted.length >= 1, 'the server was reached');
    } finally {
      await db.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import Fastify from 'fastify';
import { registerErrorHandling } from '../../src/api/plugins/errors.js';
import { openDatabase } from '../../src/store/db.js';
import { Store } from '../../src/store/store.js';
import { connectTestDatabase, createTestDatabaseUrl, stopOwnCluster } from '../support/database.js';
import { freePort } from '../support/postgres.js';

// Every class of database failure, each raised by a real PostgreSQL (or its driver), through the API's one
// error mapping: a passing state (unreachable, timed out, overloaded, restarting, a conflict) answers 503, a
// fault 500, each with a JSON body that says which in words; nothing else of the error goes out.

after(stopOwnCluster);

/** A failure PostgreSQL raises with this SQLSTATE, from a statement it really runs. */
const raising = (sqlstate: string) =>
  `DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '${sqlstate}'; END $$`;

const CASES: { name: string; statement: string; status: number; message: string }[] = [
  {
    name: 'statement_timeout (57014)',
    statement: "SET LOCAL statement_timeout = '1ms'; SELECT pg_sleep(1)",
    status: 503,
    message: 'The database did not answer in time',
  },
  {
    name: 'lock_timeout (55P03)',
    statement: "SET LOCAL lock_timeout = '1ms'; LOCK TABLE held IN ACCESS EXCLUSIVE MODE",
    status: 503,
    message: 'The database did not answer in time',
  },
  {
    name: 'too many connections (53300)',
    statement: raising('53300'),
    status: 503,
    message: 'The database is out of resources (connections, memory or disk)',
  },
  {
    name: 'disk full (53100)',
    statement: raising('53100'),
    status: 503,
    message: 'The database is out of resources (connections, memory or disk)',
  },
  {
    name: 'I/O error (58030)',
    statement: raising('58030'),
    status: 503,
    message: 'The database is out of resources (connections, memory or disk)',
  },
  {
    name: 'admin shutdown (57P01)',
    statement: raising('57P01'),
    status: 503,
    message: 'The database is restarting or read-only',
  },
  {
    name: 'cannot connect now (57P03)',
    statement: raising('57P03'),
    status: 503,
    message: 'The database is restarting or read-only',
  },
  {
    name: 'a write on a read-only server (25006)',
    statement: 'SET TRANSACTION READ ONLY; CREATE TABLE refused (v int)',
    status: 503,
    message: 'The database is restarting or read-only',
  },
  {
    name: 'serialization failure (40001)',
    statement: raising('40001'),
    status: 503,
    message: 'The request conflicted with another database transaction',
  },
  {
    name: 'deadlock (40P01)',
    statement: raising('40P01'),
    status: 503,
    message: 'The request conflicted with another database transaction',
  },
  {
    name: 'connection failure (08006)',
    statement: raising('08006'),
    status: 503,
    message: 'The database service is unavailable',
  },
  {
    name: 'division by zero (22012)',
    statement: 'SELECT 1 / 0',
    status: 500,
    message: 'The database refused a value of this request',
  },
  {
    name: 'undefined table (42P01)',
    statement: 'SELECT * FROM no_such_table',
    status: 500,
    message: 'The database failed to answer the request',
  },
  {
    name: 'internal error (XX000)',
    statement: raising('XX000'),
    status: 500,
    message: 'The database failed to answer the request',
  },
];

const ERROR_TEXT: Record<number, string> = { 500: 'Internal Server Error', 503: 'Service Unavailable' };

describe('database failures through the API error mapping (postgres)', () => {
  test('every class of failure: 503 when it may pass, 500 when not, each said in words', async () => {
    const url = await createTestDatabaseUrl();
    const store = new Store(await connectTestDatabase(url, { poolMax: 2 }));
    const holder = new Store(await connectTestDatabase(url));
    const refused = new Store(
      await openDatabase({ url: `postgres://u@127.0.0.1:${await freePort()}/db`, pgliteDir: '', poolMax: 1 }),
    );
    const app = Fastify();
    registerErrorHandling(app);
    app.get<{ Params: { i: string } }>('/case/:i', async (request) => {
      // SET LOCAL: a setting of one case ends with its transaction
      await store.sql.begin((tx) => tx.unsafe(CASES[Number(request.params.i)].statement));
      return { unexpected: 'no error' };
    });
    app.get('/unreachable', async () => refused.sql`SELECT 1`);
    app.get('/not-a-database-error', async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'index_block_hash')");
    });
    // the lock_timeout case waits for a table another session holds
    await store.sql`CREATE TABLE held (v int)`;
    let release: (() => void) | undefined;
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holding = holder.sql.begin(async (tx) => {
      await tx`LOCK TABLE held IN ACCESS EXCLUSIVE MODE`;
      locked();
      await new Promise<void>((resolve) => (release = resolve));
    });
    try {
      await lockTaken;
      const answers = [];
      for (const [i, c] of CASES.entries()) {
        const res = await app.inject({ url: `/case/${i}` });
        answers.push({ name: c.name, status: res.statusCode, body: res.json() as unknown });
      }
      assert.deepEqual(
        answers,
        CASES.map((c) => ({
          name: c.name,
          status: c.status,
          body: { statusCode: c.status, error: ERROR_TEXT[c.status], message: c.message },
        })),
      );
      const unreachable = await app.inject({ url: '/unreachable' });
      assert.equal(unreachable.statusCode, 503);
      assert.deepEqual(unreachable.json(), {
        statusCode: 503,
        error: 'Service Unavailable',
        message: 'The database service is unavailable',
      });
      const other = await app.inject({ url: '/not-a-database-error' });
      assert.deepEqual(other.json(), {
        statusCode: 500,
        error: 'Internal Server Error',
        message: 'An internal error occurred',
      });
      for (const res of [unreachable, other]) assert.equal(res.headers['cache-control'], 'no-store');
    } finally {
      release?.();
      await holding.catch(() => {});
      await app.close();
      await Promise.all([store.close(), holder.close(), refused.close()]);
    }
  });
});

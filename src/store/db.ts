import postgres from 'postgres';
import type { Logger } from 'pino';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { databaseTarget } from '../config.js';
import { DatabaseAccessError, lockDirectory, type DirectoryLock } from './directory-lock.js';
import type { MessagePort } from 'node:worker_threads';
import { connectOverPort, PgliteSession } from './pglite-wire.js';

export type Sql = postgres.Sql<Record<string, unknown>>;
export type TransactionSql = postgres.TransactionSql<Record<string, unknown>>;
export type Engine = 'postgres' | 'pglite';

export interface Database {
  readonly engine: Engine;
  readonly sql: Sql;
  /** Where the data lives, without credentials, for logs. */
  readonly description: string;
  /** An embedded database in a directory: what answers other processes' requests (see directory-lock.ts). */
  readonly control?: Pick<DirectoryLock, 'serve'>;
  /** PGlite: serves this session to another thread's connections (`DatabaseOptions.pglitePort` there). */
  serveOverPort?(port: MessagePort): void;
  /** PGlite: the largest message one call of its session ran, and the longest call, since the last look. */
  takeLargestPgliteCall?(): { bytes: number; ms: number };
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres://… to use PostgreSQL; empty to use the embedded PGlite. */
  url: string;
  /** PGlite data directory; `memory://` for a throwaway in-memory database. */
  pgliteDir: string;
  poolMax: number;
  /** How long opening a connection may take before queries fail (and the API answers 503); default 400. */
  connectTimeoutMs?: number;
  logger?: Logger;
  /** Tag shown in pg_stat_activity. */
  applicationName?: string;
  /**
   * PGlite open in another thread, which serves its session over this port (`Database.serveOverPort`
   * there): this thread's connections go to that session (the ingest thread, ingest-thread.ts).
   */
  pglitePort?: MessagePort;
  /**
   * In memory (`memory://`): the dump of a data directory (PGlite's `dumpDataDir`) to start from instead of
   * creating a cluster; the tests start each of theirs from one kept dump (~0.3 s instead of ~1 s).
   */
  pgliteStartFrom?: Blob;
}

/**
 * int8 arrives from postgres.js as a string; every int8 this schema holds (times, costs, counts) fits in a
 * double, so it becomes a number at the edge. Amounts are `numeric` and stay decimal strings.
 */
const clientTypes = {
  int8: {
    to: 20,
    from: [20],
    serialize: (value: number | bigint | string) => String(value),
    parse: (value: string) => Number(value),
  },
};

const DEFAULT_CONNECT_TIMEOUT_MS = 400;

function clientOptions(options: DatabaseOptions, max: number) {
  return {
    max,
    types: clientTypes,
    onnotice: () => {},
    idle_timeout: 0,
    connect_timeout: (options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS) / 1000,
    // While the database is down every query waits for the next connection attempt, and a request may run
    // several queries in turn: retry soon (postgres.js backs off exponentially up to 20 s by default; a
    // 200 ms cap measured 600-1200 ms before a 503), so requests fail fast with 503 and recover fast. A
    // refused connection costs next to nothing, even 20 times a second.
    backoff: (attempt: number) => Math.min(0.01 * attempt, 0.05),
    connection: { application_name: options.applicationName ?? 'stacks-read-api' },
    // Statements are prepared once per connection; hot reads are always the same few shapes.
    prepare: true,
  } as const;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.url) return openPostgres(options);
  if (options.pglitePort) return openPgliteOverPort(options, options.pglitePort);
  return openPglite(options);
}

/**
 * Opens the first connection to a PostgreSQL database: one that cannot be reached (an unknown host, a
 * refused port, a wrong password, a database that does not exist) is then a DatabaseAccessError naming
 * it in one line, instead of the first query's failure. PGlite, in this process, is always reached.
 */
export async function checkReachable(db: Database): Promise<void> {
  if (db.engine !== 'postgres') return;
  try {
    await db.sql`SELECT 1`;
  } catch (err) {
    throw new DatabaseAccessError(
      `cannot connect to the database at ${db.description}: ${(err as Error).message}`,
    );
  }
}

/** PGlite's session served by another thread of this process (`Database.serveOverPort`). */
function openPgliteOverPort(options: DatabaseOptions, port: MessagePort): Database {
  const connect = connectOverPort(port);
  const sql = postgres({
    database: 'postgres',
    username: 'postgres',
    ...clientOptions(options, 1),
    ...({ socket: connect } as object),
  }) as unknown as Sql;
  return {
    engine: 'pglite',
    sql,
    description: 'pglite (another thread)',
    async close() {
      await sql.end({ timeout: 5 });
      port.close();
    },
  };
}

function openPostgres(options: DatabaseOptions): Database {
  const client = clientOptions(options, options.poolMax);
  const sql = postgres(options.url, {
    ...client,
    // Every statement here is a short indexed read or write: JIT compilation (on by default in PostgreSQL,
    // for plans estimated above jit_above_cost) would cost milliseconds on each call of a prepared statement
    // whose generic plan looks expensive on a large table, for nothing.
    connection: { ...client.connection, jit: 'off' },
  }) as unknown as Sql;
  return {
    engine: 'postgres',
    sql,
    description: databaseTarget(options.url),
    close: () => sql.end({ timeout: 5 }),
  };
}

/**
 * PGlite runs in this process; postgres.js speaks to it through an in-process stream (pglite-wire.ts), so
 * both engines share one client and one SQL dialect, and the embedded database opens no socket at all.
 * PGlite has a single session, so the pool is exactly one connection. A directory is held by one process
 * at a time (directory-lock.ts), from before PGlite opens it until after it is closed.
 */
async function openPglite(options: DatabaseOptions): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  const directory = options.pgliteDir.startsWith('memory://') ? undefined : options.pgliteDir;
  const lock = directory === undefined ? undefined : await lockDirectory(directory);
  let pglite: InstanceType<typeof PGlite>;
  try {
    pglite =
      directory === undefined && options.pgliteStartFrom
        ? await PGlite.create({ loadDataDir: options.pgliteStartFrom })
        : await PGlite.create(directory);
  } catch (err) {
    await lock?.release();
    throw directory === undefined ? err : await cannotOpen(directory, err as Error);
  }
  const session = new PgliteSession(pglite);
  const sql = postgres({
    database: 'postgres',
    username: 'postgres',
    ...clientOptions(options, 1),
    // postgres.js takes a custom connection (documented, not in its type declarations)
    ...({ socket: () => session.connect() } as object),
  }) as unknown as Sql;
  return {
    engine: 'pglite',
    sql,
    description: directory === undefined ? 'pglite (in memory)' : `pglite ${directory}`,
    control: lock,
    serveOverPort: (port) => session.serveOverPort(port),
    takeLargestPgliteCall: () => session.takeLargestCall(),
    async close() {
      try {
        await sql.end({ timeout: 5 });
        await pglite.close();
      } finally {
        await lock?.release();
      }
    },
  };
}

/** Why PGlite could not open `directory`, said so its user knows what to do. */
async function cannotOpen(directory: string, err: Error): Promise<DatabaseAccessError> {
  const initialised = await access(join(directory, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (!initialised) {
    return new DatabaseAccessError(`cannot create a PGlite database in ${directory}: ${err.message}`);
  }
  // A WASM abort ("RuntimeError: Aborted()") is all PGlite says about a directory it cannot recover, e.g.
  // "PANIC: could not locate a valid checkpoint record" after two processes wrote to it.
  const cause = err.name === 'RuntimeError' ? 'PGlite aborted' : err.message.split('\n')[0];
  return new DatabaseAccessError(
    `the PGlite database in ${directory} cannot be opened (${cause}): it is damaged, ` +
      `or was written by an incompatible PGlite version. To start over with an empty database, move it ` +
      `aside (mv ${directory} ${directory}.damaged) or delete it; the chain is indexed again from the ` +
      `node's events or a replay (API keys must be created again)`,
  );
}

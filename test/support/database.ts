import pino from 'pino';
import { openDatabase, type Database, type DatabaseOptions, type Engine } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { Store, type StoreOptions } from '../../src/store/store.js';
import { startPostgres, type TestPostgres } from './postgres.js';

// Test databases. The PostgreSQL cluster is started once by test/run.ts and shared through TEST_PG_URL; a test
// file run on its own starts its own. Each test database is new and migrated. Which engines a test runs on:
// engines.ts.

let ownCluster: Promise<TestPostgres> | undefined;
let counter = 0;

async function postgresAdminUrl(): Promise<string> {
  if (process.env.TEST_PG_URL) return process.env.TEST_PG_URL;
  ownCluster ??= startPostgres();
  return (await ownCluster).url;
}

/**
 * How long a test's pool waits for a connection: the production default (400 ms, DB_CONNECT_TIMEOUT_MS) is
 * for a host that does not answer, and is missed by a loaded 2-core machine running the suite.
 */
export const TEST_CONNECT_TIMEOUT_MS = 10_000;

/** A client of an existing database (by URL), with the tests' connect timeout unless `options` sets one. */
export function connectTestDatabase(url: string, options: Partial<DatabaseOptions> = {}): Promise<Database> {
  return openDatabase({
    url,
    pgliteDir: '',
    poolMax: 1,
    connectTimeoutMs: TEST_CONNECT_TIMEOUT_MS,
    ...options,
  });
}

export const silentLogger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

export type LogLine = { level: number; msg: string; [k: string]: unknown };

/** A logger at info whose lines are kept, parsed, to check what was logged. */
export function capturingLogger() {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as LogLine) },
  );
  return { logger, lines };
}

/** A new, empty (not migrated) database on the given engine. */
export async function openTestDatabase(engine: Engine): Promise<Database> {
  if (engine === 'pglite') {
    return openDatabase({
      url: '',
      pgliteDir: 'memory://',
      poolMax: 1,
      connectTimeoutMs: TEST_CONNECT_TIMEOUT_MS,
    });
  }
  return connectTestDatabase(await createTestDatabaseUrl(), { poolMax: 2 });
}

/** A new, empty (not migrated) database in the test cluster; its URL (for child processes, `serve`...). */
export async function createTestDatabaseUrl(): Promise<string> {
  const adminUrl = await postgresAdminUrl();
  const { default: postgres } = await import('postgres');
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const name = `test_${process.pid}_${Date.now()}_${counter++}`;
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A migrated, empty store on the given engine. */
export async function openTestStore(engine: Engine, options?: StoreOptions): Promise<Store> {
  const db = await openTestDatabase(engine);
  await migrate(db.sql);
  return new Store(db, options);
}

/** Stops the cluster this process started itself, if any (call once, at the end of a test file). */
export async function stopOwnCluster(): Promise<void> {
  if (ownCluster) await (await ownCluster).stop();
  ownCluster = undefined;
}

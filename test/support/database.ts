import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

let emptyPgliteCluster: Promise<Blob> | undefined;

/**
 * A new PGlite cluster, dumped: what every in-memory test database starts from. Creating a cluster costs ~1 s
 * of CPU and loading a dump ~0.3 s, and the suite opens dozens, so the dump is kept in the system's temporary
 * directory (one per PGlite version) for the test processes that follow.
 */
function emptyPgliteDump(): Promise<Blob> {
  emptyPgliteCluster ??= (async () => {
    // the package does not export its package.json: read it beside its entry (<package>/dist/index.*)
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    const { version } = JSON.parse(readFileSync(join(dirname(dirname(entry)), 'package.json'), 'utf8')) as {
      version: string;
    };
    const file = join(tmpdir(), `stacks-read-api-test-pglite-${version}.tar`);
    if (existsSync(file)) return new Blob([readFileSync(file)]);
    const { PGlite } = await import('@electric-sql/pglite');
    const pglite = await PGlite.create();
    const dump = await pglite.dumpDataDir('none');
    await pglite.close();
    // another test process may write it at the same time: each writes its own file, and renames it in place
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
    return dump;
  })();
  return emptyPgliteCluster;
}

/** A new, empty (not migrated) database on the given engine. */
export async function openTestDatabase(engine: Engine): Promise<Database> {
  if (engine === 'pglite') {
    return openDatabase({
      url: '',
      pgliteDir: 'memory://',
      poolMax: 1,
      connectTimeoutMs: TEST_CONNECT_TIMEOUT_MS,
      pgliteStartFrom: await emptyPgliteDump(),
    });
  }
  return connectTestDatabase(await createTestDatabaseUrl(), { poolMax: 2 });
}

const templates = new Map<string, Promise<string>>();

/**
 * A new database in the test cluster, a copy of the one `fill` wrote (it is given the new database's URL, and
 * must close every connection it opened): filled once per `key` in this process, copied for every call
 * (`CREATE DATABASE ... TEMPLATE`: ~0.1 s, where replaying a fixture takes seconds).
 */
export async function createFilledDatabaseUrl(key: string, fill: (url: string) => Promise<void>) {
  let template = templates.get(key);
  if (!template) {
    template = createTestDatabaseUrl().then(async (url) => {
      await fill(url);
      return new URL(url).pathname.slice(1);
    });
    templates.set(key, template);
  }
  return createTestDatabaseUrl(await template);
}

/**
 * A new database in the test cluster, empty (not migrated) or a copy of the database `template`; its URL (for
 * child processes, `serve`...).
 */
export async function createTestDatabaseUrl(template?: string): Promise<string> {
  const adminUrl = await postgresAdminUrl();
  const { default: postgres } = await import('postgres');
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const name = `test_${process.pid}_${Date.now()}_${counter++}`;
  try {
    await admin.unsafe(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
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

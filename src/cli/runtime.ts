import type { Logger } from 'pino';
import { databaseTarget, isMainnet, type Config } from '../config.js';
import type { IngestWorkerData } from '../ingest/ingest-thread.js';
import { Ingestor, type IngestorOptions } from '../ingest/ingestor.js';
import { testPause } from '../ingest/test-pauses.js';
import { loadVestingFile } from '../ingest/vesting.js';
import { checkReachable, openDatabase } from '../store/db.js';
import { DatabaseAccessError } from '../store/directory-lock.js';
import { migrate, pendingMigrations } from '../store/migrate.js';
import { Store } from '../store/store.js';
import { keysControlHandler } from './keys.js';

/** Opens the configured database; migrates it unless `readOnly` (then it must already be up to date). */
export async function openStore(config: Config, logger: Logger, options: { readOnly?: boolean } = {}) {
  const db = await openDatabase({
    url: config.DATABASE_URL,
    pgliteDir: config.PGLITE_DIR,
    poolMax: config.DB_POOL_MAX,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    logger,
  });
  const store = new Store(db);
  // A process holding an embedded database runs the `keys` commands other processes send it.
  db.control?.serve(keysControlHandler(store));
  try {
    await checkReachable(db);
    if (options.readOnly) {
      const pending = await pendingMigrations(db.sql);
      if (pending.length > 0) {
        throw new Error(`database is not migrated (pending: ${pending.join(', ')}); run the migrate command`);
      }
    } else {
      const applied = await migrate(db.sql);
      if (applied.length > 0) logger.info({ applied }, 'migrations applied');
      if (config.VESTING_FILE) await loadVestingFile(store, config.VESTING_FILE, logger);
    }
  } catch (err) {
    await db.close();
    throw err;
  }
  logger.info({ database: db.description, engine: db.engine }, 'database ready');
  return store;
}

export function createIngestor(
  store: Store,
  config: Config,
  logger: Logger,
  onMessage?: IngestorOptions['onMessage'],
): Ingestor {
  return new Ingestor(store, {
    isMainnet: isMainnet(config),
    logger,
    onMessage,
    // Test hooks, off unless set: a crash-safety test kills the process while a message waits there.
    beforeCommit: testPause(config.TEST_PAUSE_BEFORE_COMMIT_MS, logger, 'TEST_PAUSE_BEFORE_COMMIT_MS'),
    afterCommit: testPause(config.TEST_PAUSE_AFTER_COMMIT_MS, logger, 'TEST_PAUSE_AFTER_COMMIT_MS'),
  });
}

/** What the ingest thread needs to run the same Ingestor as `createIngestor` on its own connection. */
export function ingestWorkerData(config: Config): IngestWorkerData {
  return {
    databaseUrl: config.DATABASE_URL,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    isMainnet: isMainnet(config),
    logLevel: config.LOG_LEVEL,
    pauseBeforeCommitMs: config.TEST_PAUSE_BEFORE_COMMIT_MS,
    pauseAfterCommitMs: config.TEST_PAUSE_AFTER_COMMIT_MS,
  };
}

/**
 * The primary for a reader that serves from replicas: opened without a query (postgres.js connects on
 * first use), so a reader starts and serves even while the primary is down. One connection is plenty: it
 * only answers readiness checks and takes API-key bookkeeping writes.
 */
export async function openPrimaryForReader(config: Config): Promise<Store> {
  return new Store(
    await openDatabase({
      url: config.DATABASE_URL,
      pgliteDir: '',
      poolMax: 1,
      applicationName: 'stacks-read-api',
    }),
  );
}

/**
 * Opens the replica this process reads from. Each process starts at a random replica of the list (so a
 * fleet of readers with one configuration spreads over the replicas) and takes the first that answers and
 * carries every migration; a replica that fails later makes /ready answer 503, so the load balancer drains
 * this process until the replica is back (postgres.js reconnects by itself).
 */
export async function openReplicaStore(
  urls: string[],
  config: Config,
  logger: Logger,
  start = Math.floor(Math.random() * urls.length),
): Promise<Store> {
  const failures: string[] = [];
  for (let i = 0; i < urls.length; i++) {
    const url = urls[(start + i) % urls.length];
    const db = await openDatabase({ url, pgliteDir: '', poolMax: config.DB_POOL_MAX, logger });
    try {
      const pending = await pendingMigrations(db.sql);
      if (pending.length > 0) throw new Error(`not migrated (pending: ${pending.join(', ')})`);
      logger.info({ database: db.description }, 'reading from replica');
      return new Store(db);
    } catch (err) {
      failures.push(`${databaseTarget(url)}: ${(err as Error).message}`);
      logger.warn(
        { database: db.description, err: (err as Error).message },
        'replica unusable, trying the next',
      );
      await db.close();
    }
  }
  throw new DatabaseAccessError(`no usable replica in DATABASE_REPLICA_URLS: ${failures.join('; ')}`);
}

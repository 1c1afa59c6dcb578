import pino, { type Logger } from 'pino';
import { isMainnet, type Config } from '../config.js';
import { Ingestor } from '../ingest/ingestor.js';
import { loadVestingFile } from '../ingest/vesting.js';
import { openDatabase } from '../store/db.js';
import { migrate, pendingMigrations } from '../store/migrate.js';
import { Store } from '../store/store.js';

export function createLogger(config: Config): Logger {
  return pino({ level: config.LOG_LEVEL, base: { service: 'stacks-read-api' } });
}

/** Opens the configured database; migrates it unless `readOnly` (then it must already be up to date). */
export async function openStore(config: Config, logger: Logger, options: { readOnly?: boolean } = {}) {
  const db = await openDatabase({
    url: config.DATABASE_URL,
    pgliteDir: config.PGLITE_DIR,
    poolMax: config.DB_POOL_MAX,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    logger,
  });
  try {
    if (options.readOnly) {
      const pending = await pendingMigrations(db.sql);
      if (pending.length > 0) {
        throw new Error(`database is not migrated (pending: ${pending.join(', ')}); run the migrate command`);
      }
    } else {
      const applied = await migrate(db.sql);
      if (applied.length > 0) logger.info({ applied }, 'migrations applied');
      if (config.VESTING_FILE) await loadVestingFile(new Store(db), config.VESTING_FILE, logger);
    }
  } catch (err) {
    await db.close();
    throw err;
  }
  logger.info({ database: db.description, engine: db.engine }, 'database ready');
  return new Store(db);
}

export function createIngestor(store: Store, config: Config, logger: Logger): Ingestor {
  return new Ingestor(store, {
    isMainnet: isMainnet(config),
    logger,
    // Test hooks, off unless set: a crash-safety test kills the process while a message waits there.
    beforeCommit: testPause(config.TEST_PAUSE_BEFORE_COMMIT_MS, logger, 'TEST_PAUSE_BEFORE_COMMIT_MS'),
    afterCommit: testPause(config.TEST_PAUSE_AFTER_COMMIT_MS, logger, 'TEST_PAUSE_AFTER_COMMIT_MS'),
  });
}

function testPause(ms: number, logger: Logger, name: string) {
  if (ms <= 0) return undefined;
  return async (path: string) => {
    logger.warn({ path, ms }, `${name}: pausing`);
    await new Promise((resolve) => setTimeout(resolve, ms));
  };
}

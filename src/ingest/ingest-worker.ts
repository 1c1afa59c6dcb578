import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { openDatabase } from '../store/db.js';
import { Store } from '../store/store.js';
import { InvalidMessageError } from '../errors.js';
import { Ingestor } from './ingestor.js';
import type { FromIngestWorker, IngestMetric, IngestWorkerData, ToIngestWorker } from './ingest-thread.js';
import { testPause } from './test-pauses.js';

// The ingest thread (ingest-thread.ts): applies observer messages on a database connection of its own, so
// the JSON decoding of a large message does not hold up the process's event loop, nor (PostgreSQL) its
// database transaction the process's reads.

const data = workerData as IngestWorkerData;
const port = parentPort!;
const post = (message: FromIngestWorker) => port.postMessage(message);

// Log lines go to the main thread's logger (its destination and format), one message each.
const logger = pino(
  { level: data.logLevel, base: null, timestamp: false },
  { write: (line: string) => post({ kind: 'log', line }) },
);
const store = new Store(
  await openDatabase({
    url: data.databaseUrl,
    pgliteDir: '',
    pglitePort: data.pglitePort,
    poolMax: 1,
    connectTimeoutMs: data.connectTimeoutMs,
    applicationName: 'stacks-read-api ingest',
  }),
);
// Each message's metric goes to the main thread with the next answer (ingest-thread.ts): every metric is
// recorded before its own message settles, so none waits longer than that.
let metrics: IngestMetric[] = [];
const answer = (message: Omit<Extract<FromIngestWorker, { kind: 'done' }>, 'kind' | 'metrics'>) => {
  post({ kind: 'done', ...message, metrics });
  metrics = [];
};
const ingestor = new Ingestor(store, {
  isMainnet: data.isMainnet,
  logger,
  onMessage: (path, outcome, seconds) => metrics.push({ path, outcome, seconds }),
  beforeCommit: testPause(data.pauseBeforeCommitMs, logger, 'TEST_PAUSE_BEFORE_COMMIT_MS'),
  afterCommit: testPause(data.pauseAfterCommitMs, logger, 'TEST_PAUSE_AFTER_COMMIT_MS'),
});

// Before the first message: a message the log holds as delivered is indexed (Ingestor.recoverLoggedNotIndexed).
// Messages the main thread posts meanwhile wait in the port. A database that cannot be reached now is checked
// at the next start; the messages are taken anyway (each fails with 500 until the database is back).
await ingestor
  .recoverLoggedNotIndexed()
  .catch((err: unknown) => logger.error({ err }, 'checking the raw log against the index failed'));

port.on('message', (message: ToIngestWorker) => {
  if (message.kind === 'close') {
    // an ANALYZE started after the last message ends first (store/maintenance.ts)
    void ingestor
      .settled()
      .then(() => store.close())
      .finally(() => port.close());
    return;
  }
  const { id, path, receivedAt } = message;
  ingestor.take(path, new Uint8Array(message.body), new Date(receivedAt)).then(
    (outcome) => answer({ id, outcome }),
    (err: Error) =>
      answer({
        id,
        error: {
          message: err.message,
          statusCode: err instanceof InvalidMessageError ? err.statusCode : undefined,
        },
      }),
  );
});
post({ kind: 'ready' });

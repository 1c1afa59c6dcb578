import { caches } from '../../caches.js';
import type { Migration } from '../../store/migrate.js';
import { chainTipSeen } from '../../store/read/chain-state.js';
import {
  appliedMigrationVersions,
  getDatabaseRole,
  getIngestStatus,
  type IngestStatus,
} from '../../store/read/status.js';
import type { Store } from '../../store/store.js';
import { readinessReport, serverStatus } from '../render/status.js';
import { serializerOf } from '../render/serializer.js';
import { Health, Readiness, ServerStatus } from '../schemas/status.js';
import { jsonAnswer, type Answer } from './answer.js';

// GET /extended (version, status, chain tip), /health (the process answers: for liveness probes, touches
// nothing) and /ready (the database answers and is migrated, and ingest in this process is not stuck: for load
// balancers; ingest lag is reported, see docs/deploy.md). Untagged: never cached by clients.
//
// Caches (docs/caching.md): the readiness check, shared by every call for a second.

export interface StatusOptions {
  /** Where reads are served from (the primary, or a replica). */
  store: Store;
  /** The primary, when reads come from a replica: readiness reports how far behind the replica is. */
  primary?: Store;
  /** e.g. `v0.1.0 (main:abc1234)`. */
  apiVersion: string;
  /** The migrations this version of the code expects. */
  migrations: Migration[];
  /** Longest a readiness check waits for a database. */
  readyTimeoutMs?: number;
  /** When this process runs the event observer: whether its ingest makes progress. */
  ingestProgress?: IngestWatch;
}

/** How readiness sees ingest in this process (cli/serve.ts builds it from ingest/ingest-progress.ts). */
export interface IngestWatch {
  /** seconds the oldest observer message has waited without any message being taken since */
  waitingSeconds(): number;
  /** past this, ingest is stuck and the process not ready */
  stallSeconds: number;
}

class TimeoutError extends Error {}

/** How long one readiness check answers /ready. */
const READY_CACHE_MS = 1_000;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const writeStatus = serializerOf(ServerStatus);
const writeHealth = serializerOf(Health);
const writeReadiness = serializerOf(Readiness);
const HEALTHY = writeHealth({ status: 'ok' });

// eslint-disable-next-line max-lines-per-function -- a factory: the caches of the resource and the answer functions sharing them, each under 80 lines
export function statusAnswers(options: StatusOptions) {
  const { store, primary, apiVersion, migrations } = options;
  const timeoutMs = options.readyTimeoutMs ?? 2_000;

  /** Whether ingest in this process makes progress, as readiness reports it. */
  const observerState = (): Readiness['observer'] => {
    const watch = options.ingestProgress;
    if (!watch) return undefined;
    const waiting = watch.waitingSeconds();
    return { waiting_seconds: Math.round(waiting * 10) / 10, stalled: waiting > watch.stallSeconds };
  };

  /** One readiness check: the database answers and is migrated, ingest is not stuck; lag figures. Never throws. */
  async function checkReadiness(): Promise<Readiness> {
    const observer = observerState();
    try {
      const [role, applied, ingest] = await withTimeout(
        Promise.all([
          store.engine === 'postgres'
            ? getDatabaseRole(store.sql)
            : Promise.resolve({ in_recovery: false, replay_lag_seconds: null }),
          appliedMigrationVersions(store.sql),
          getIngestStatus(store.sql).catch(() => null),
        ]),
        timeoutMs,
        'the database',
      );
      if (ingest?.index_block_hash) chainTipSeen(store, ingest.index_block_hash);
      const pendingMigrations = migrations.filter((m) => !applied.has(m.version)).map((m) => m.name);
      let primaryTip: IngestStatus | null | undefined;
      if (primary && primary !== store) {
        // A primary that is down does not stop a replica from serving reads.
        primaryTip = await withTimeout(getIngestStatus(primary.sql), timeoutMs, 'the primary').catch(
          () => null,
        );
      }
      return readinessReport({ engine: store.engine, observer, role, pendingMigrations, ingest, primaryTip });
    } catch (err) {
      const error = (err as Error).message || (err as { code?: string }).code || 'unreachable';
      return readinessReport({ engine: store.engine, observer, error });
    }
  }

  // Load balancers and probes may call /ready as often as they like (it is outside the rate limits): the
  // answer of one check is shared by every call for a second (measured: 40,667 calls in 10 s from one client
  // each queried the database), and calls during a check wait for it rather than start another.
  const readinessCheck: { startedAt: number; report: Promise<Readiness> | undefined } = {
    startedAt: 0,
    report: undefined,
  };
  caches.join(
    {
      name: 'readiness check',
      layer: 'status',
      key: 'none (one check)',
      invalidatedBy: 'its age: one second',
      bound: 'one report',
      file: 'src/api/answers/status.ts',
    },
    readinessCheck,
  );

  return {
    /** The server version, its status and the chain tip it serves. */
    async serverStatus(): Promise<Answer> {
      const status = await getIngestStatus(store.sql);
      if (status.index_block_hash) chainTipSeen(store, status.index_block_hash);
      return jsonAnswer(writeStatus(serverStatus(apiVersion, status)));
    },
    health: (): Answer => jsonAnswer(HEALTHY),
    /** 200 when ready, else 503 with what failed: from a check at most one second old. */
    async readiness(): Promise<Answer> {
      const now = performance.now();
      if (!readinessCheck.report || now - readinessCheck.startedAt >= READY_CACHE_MS) {
        readinessCheck.startedAt = now;
        readinessCheck.report = checkReadiness();
      }
      const report = await readinessCheck.report;
      return { status: report.status === 'ready' ? 200 : 503, body: writeReadiness(report) };
    },
  };
}

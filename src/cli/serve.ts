import { isIPv4 } from 'node:net';
import { MessageChannel } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { connectionLimitsFromConfig } from '../api/connection-limits.js';
import { accessControlFromConfig } from '../api/plugins/access-control.js';
import { accessCounters, pushCounters } from '../metrics.js';
import { pushLimitsFromConfig } from '../push/index.js';
import { buildApiServer } from '../api/server.js';
import { ConfigError, replicaUrls, type Config } from '../config.js';
import { IngestProgress } from '../ingest/ingest-progress.js';
import { IngestThread } from '../ingest/ingest-thread.js';
import type { IngestorOptions } from '../ingest/ingestor.js';
import { buildObserverServer } from '../ingest/observer-server.js';
import { chainStateChanged } from '../store/read/chain-state.js';
import { ServiceMetrics, startMetricsServer } from '../metrics.js';
import type { Store } from '../store/store.js';
import { serviceVersion } from '../version.js';
import { portError, serverAddressesOf, type ServeMode, type ServerAddress } from './ports.js';
import { ingestWorkerData, openPrimaryForReader, openReplicaStore, openStore } from './runtime.js';

type IngestOutcome = Parameters<NonNullable<IngestorOptions['onMessage']>>[1];

export interface RunningService {
  api?: FastifyInstance;
  observer?: FastifyInstance;
  /** The store the API reads (the primary when there is no replica). */
  store?: Store;
  /** Port of the Prometheus endpoint, when metrics are on. */
  metricsPort?: number;
  metrics?: ServiceMetrics;
  /** Stops accepting, finishes what is in flight (requests, the message being ingested), closes the pools. */
  stop(): Promise<void>;
}

/**
 * Starts the service: the public read API and/or the event observer, and the metrics endpoint.
 * - `both`: observer and API; migrates the primary (DATABASE_URL, or PGlite).
 * - `read-only`: API only, no observer, no migration (the database must be migrated already).
 * - `write-only`: observer only; migrates.
 * With DATABASE_REPLICA_URLS the API reads from one replica (see openReplicaStore and docs/deploy.md);
 * the observer always writes to the primary.
 */
export async function serve(
  config: Config,
  logger: Logger,
  mode: ServeMode,
  options: {
    /** work on the primary before the servers open (the demo chain) */
    beforeListen?: (store: Store) => Promise<void>;
    /** aborted when a stop is asked for during start-up: what was opened is closed, and serve throws */
    signal?: AbortSignal;
  } = {},
): Promise<RunningService> {
  const replicas = replicaUrls(config);
  if (replicas.length > 0 && !config.DATABASE_URL && mode !== 'read-only') {
    throw new ConfigError(
      'DATABASE_REPLICA_URLS needs DATABASE_URL (the PostgreSQL primary the observer writes to), or serve --read-only',
    );
  }
  const opened: Opened = { addresses: serverAddressesOf(config, mode), servers: [], stores: new Set() };
  const service: RunningService = { stop: () => stopOpened(opened) };
  try {
    const { primary, reads } = await openStores(config, logger, mode, replicas, opened);
    service.store = reads ?? primary;
    options.signal?.throwIfAborted();
    if (primary) await options.beforeListen?.(primary);
    options.signal?.throwIfAborted();

    const metrics = config.METRICS_ENABLED
      ? new ServiceMetrics({
          store: reads ?? primary,
          accessCounters: mode === 'write-only' ? undefined : accessCounters,
          pushCounters: mode !== 'write-only' && config.PUSH_ENABLED ? pushCounters : undefined,
          processMetrics: true,
        })
      : undefined;
    service.metrics = metrics;

    // Readiness watches ingest in this process (serve --read-only has none; a writer alone has no API).
    const progress = mode === 'both' ? new IngestProgress() : undefined;
    if (mode !== 'read-only' && primary) {
      service.observer = await startObserver(config, logger, { primary, progress, metrics }, opened);
    }
    if (mode !== 'write-only' && reads) {
      service.api = await startApi(config, logger, { reads, primary, progress, metrics }, opened);
    }
    if (metrics) {
      const running = await listening(opened.addresses, 'METRICS_PORT', () =>
        startMetricsServer(metrics, config.METRICS_HOST, config.METRICS_PORT),
      );
      opened.closeMetrics = running.close;
      service.metricsPort = running.port;
      logger.info(`metrics on http://${config.METRICS_HOST}:${running.port}/metrics`);
    }
  } catch (err) {
    await service.stop();
    throw err;
  }
  return service;
}

/** What `serve` opened so far, closed by `stopOpened` in order. */
interface Opened {
  addresses: ServerAddress[];
  servers: FastifyInstance[];
  stores: Set<Store>;
  closeMetrics?: () => Promise<void>;
  closeIngest?: () => Promise<void>;
}

/**
 * Every server stops accepting at once; in-flight requests, and the observer message being ingested, finish
 * first (Fastify answers 503 to new requests on connections still open). A keep-alive connection becomes
 * idle once its request is answered: closed then, not after the keep-alive timeout. Then the metrics
 * endpoint, the ingest thread and the pools close.
 */
async function stopOpened(opened: Opened): Promise<void> {
  const closing = Promise.all(opened.servers.map((server) => server.close()));
  const sweep = setInterval(() => {
    for (const server of opened.servers) server.server.closeIdleConnections();
  }, 50);
  try {
    await closing;
  } finally {
    clearInterval(sweep);
  }
  await opened.closeMetrics?.();
  await opened.closeIngest?.();
  await Promise.all([...opened.stores].map((store) => store.close()));
}

/**
 * The primary: written by the observer; read by the API unless replicas serve the reads (`reads`, undefined
 * for a writer alone).
 */
async function openStores(
  config: Config,
  logger: Logger,
  mode: ServeMode,
  replicas: string[],
  opened: Opened,
): Promise<{ primary?: Store; reads?: Store }> {
  let primary: Store | undefined;
  if (mode !== 'read-only' || replicas.length === 0) {
    primary = await openStore(config, logger, { readOnly: mode === 'read-only' });
  } else if (config.DATABASE_URL) {
    primary = await openPrimaryForReader(config);
  }
  if (primary) opened.stores.add(primary);
  let reads: Store | undefined;
  if (mode !== 'write-only') {
    reads = replicas.length > 0 ? await openReplicaStore(replicas, config, logger) : primary;
    if (reads) opened.stores.add(reads);
  }
  return { primary, reads };
}

/** The ingest thread and the observer in front of it, listening. */
async function startObserver(
  config: Config,
  logger: Logger,
  { primary, progress, metrics }: { primary: Store; progress?: IngestProgress; metrics?: ServiceMetrics },
  opened: Opened,
): Promise<FastifyInstance> {
  const onMessage =
    metrics &&
    ((path: string, outcome: IngestOutcome, seconds: number) =>
      metrics.observeIngest(path, outcome, seconds));
  // Ingest runs in a thread of its own, on its own connection: reads never wait for a large message's
  // decoding, nor on PostgreSQL for its transaction (ingest-thread.ts). PGlite stays on this thread and
  // serves that connection over a port.
  const pglite = primary.db.serveOverPort?.bind(primary.db);
  const ingestor = new IngestThread({
    progress,
    workerData: ingestWorkerData(config),
    connectPglite:
      pglite &&
      (() => {
        const { port1, port2 } = new MessageChannel();
        pglite(port1);
        return port2;
      }),
    logger,
    onMessage,
    onApplied: () => {
      for (const store of opened.stores) chainStateChanged(store);
    },
  });
  opened.closeIngest = () => ingestor.close();
  const observer = buildObserverServer({
    ingestor,
    logger,
    bodyLimitBytes: config.OBSERVER_BODY_LIMIT_MB * 1024 * 1024,
    secret: config.OBSERVER_SECRET,
  });
  opened.servers.push(observer);
  await listening(opened.addresses, 'OBSERVER_PORT', () =>
    observer.listen({ host: config.OBSERVER_HOST, port: config.OBSERVER_PORT }),
  );
  logger.info(`event observer listening on ${observer.addresses().map(url).join(', ')}`);
  if (!config.OBSERVER_SECRET && !isLoopback(config.OBSERVER_HOST)) {
    logger.warn(
      { OBSERVER_HOST: config.OBSERVER_HOST },
      `UNPROTECTED OBSERVER: OBSERVER_HOST=${config.OBSERVER_HOST} is not a loopback address and OBSERVER_SECRET is ` +
        'empty, so any host that reaches this port can post chain events (a fake block made canonical); set ' +
        'OBSERVER_SECRET and the node endpoint host:port/<secret>, or bind the observer to 127.0.0.1',
    );
  }
  return observer;
}

/** The read API, listening. */
async function startApi(
  config: Config,
  logger: Logger,
  {
    reads,
    primary,
    progress,
    metrics,
  }: { reads: Store; primary?: Store; progress?: IngestProgress; metrics?: ServiceMetrics },
  opened: Opened,
): Promise<FastifyInstance> {
  const api = await buildApiServer({
    store: reads,
    primaryStore: primary !== reads ? primary : undefined,
    logger,
    apiVersion: serviceVersion(),
    accessControl: accessControlFromConfig(config),
    requestMetrics: metrics?.requests,
    logRequests: config.LOG_REQUESTS,
    ingestProgress: progress && {
      waitingSeconds: () => progress.waitingSeconds(),
      stallSeconds: config.INGEST_STALL_SECONDS,
    },
    connectionLimits: connectionLimitsFromConfig(config),
    cacheMaxBytes: config.CACHE_MAX_MB * 1024 * 1024,
    push: config.PUSH_ENABLED ? { limits: pushLimitsFromConfig(config) } : undefined,
  });
  opened.servers.push(api);
  await listening(opened.addresses, 'API_PORT', () =>
    api.listen({ host: config.API_HOST, port: config.API_PORT }),
  );
  logger.info(`read API listening on ${api.addresses().map(url).join(', ')}`);
  return api;
}

/**
 * Listens on a server's address, a failure to bind named by its variable (checkPorts finds most before start-up; this
 * covers a port taken since).
 */
async function listening<T>(
  addresses: ServerAddress[],
  variable: ServerAddress['variable'],
  listen: () => Promise<T>,
): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const address = addresses.find((a) => a.variable === variable);
    const code = (err as NodeJS.ErrnoException).code;
    if (address && code && ['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL', 'ENOTFOUND'].includes(code)) {
      throw portError(address, err as NodeJS.ErrnoException);
    }
    throw err;
  }
}

/** Whether a bind address is loopback only (`0.0.0.0` and `::` are every interface). */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIPv4(host) && host.startsWith('127.'));
}

const url = (a: string | { address: string; port: number; family: string }) =>
  typeof a === 'string'
    ? a
    : a.family === 'IPv6'
      ? `http://[${a.address}]:${a.port}`
      : `http://${a.address}:${a.port}`;

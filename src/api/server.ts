import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { RequestMetrics } from '../metrics.js';
import { caches } from '../caches.js';
import { registerPush, type PushOptions } from '../push/index.js';
import { listMigrations } from '../store/migrate.js';
import { listenForChainState } from '../store/read/chain-state.js';
import type { Store } from '../store/store.js';
import { packageVersion } from '../version.js';
import { registerKeyOrderSerializer } from './render/serializer.js';
import { limitConnections, timeBoundOptions, type ConnectionLimits } from './connection-limits.js';
import {
  registerAccessControl,
  trustProxySetting,
  type AccessControlOptions,
} from './plugins/access-control.js';
import { conventionalHeaders, registerConventions } from './plugins/conventions.js';
import { frameworkErrorHandler, registerErrorHandling } from './plugins/errors.js';
import { registerOpenApi } from './plugins/openapi.js';
import { registerRequestLog } from './plugins/request-log.js';
import { registerRequestMetrics } from './plugins/request-metrics.js';
import { registerStrictNumbers } from './plugins/strict-numbers.js';
import { registerRoutes } from './routes/index.js';
import type { IngestWatch } from './answers/status.js';
import { statusRoutes } from './routes/status.js';
import { registerUnservedRoutes } from './routes/unserved.js';
import { formatSchemaErrors, type ValidationFailure } from './schemas/parameter-errors.js';
import { registerParamChecks } from './schemas/params.js';

export interface ApiServerOptions {
  store: Store;
  logger: Logger;
  /** Shown in the X-API-Version header, e.g. `v0.1.0 (main:abc1234)`. */
  apiVersion: string;
  /** API keys, rate limits and trusted proxies (see plugins/access-control.ts); none when absent. */
  accessControl?: AccessControlOptions;
  /**
   * The primary, when `store` is a replica: readiness reports how far behind the replica is, and API-key
   * bookkeeping (last used) is written there. Reads never go to it.
   */
  primaryStore?: Store;
  /** Request counts and latencies per route (see src/metrics.ts); none when absent. */
  requestMetrics?: RequestMetrics;
  /** One log line per request at info (plugins/request-log.ts). */
  logRequests?: boolean;
  /** When this process runs the event observer: readiness fails while its ingest is stuck. */
  ingestProgress?: IngestWatch;
  /** Time and count bounds of client connections (connection-limits.ts); none when absent. */
  connectionLimits?: ConnectionLimits;
  /** The bound of the process's caches, all routes together (src/caches.ts); 128 MiB when absent. */
  cacheMaxBytes?: number;
  /** Live push (src/push) on this server's port; none when absent. */
  push?: Omit<PushOptions, 'store'>;
}

const MAX_PARAM_LENGTH = 1000;

/** The public read API (ten endpoints of the original API, and the service routes). */
export async function buildApiServer(options: ApiServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.logger.child({ server: 'api' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler(MAX_PARAM_LENGTH, conventionalHeaders(options.apiVersion)),
    // Upstream's validation stack: coerce query strings, fill defaults, drop unknown query keys; and the
    // parameter checks a pattern cannot express (schemas/params.ts).
    // `verbose`: Ajv's errors carry the schema and the value, which the messages say in words.
    ajv: {
      customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: true, verbose: true },
      plugins: [registerParamChecks],
    },
    schemaErrorFormatter: (errors, part) => formatSchemaErrors(errors as ValidationFailure[], part),
    trustProxy: trustProxySetting(options.accessControl),
    ...(options.connectionLimits && timeBoundOptions(options.connectionLimits)),
  }).withTypeProvider<TypeBoxTypeProvider>();
  registerKeyOrderSerializer(app);
  if (options.connectionLimits) {
    limitConnections(
      app.server,
      options.connectionLimits,
      options.accessControl?.trustedProxies ?? [],
      app.log,
    );
  }
  if (options.cacheMaxBytes !== undefined) caches.setBound(options.cacheMaxBytes);
  registerErrorHandling(app);
  await registerConventions(app, options.apiVersion);
  if (options.requestMetrics) registerRequestMetrics(app, options.requestMetrics);
  if (options.logRequests) registerRequestLog(app);
  // Before any route: the OpenAPI document collects routes as they are added.
  await registerOpenApi(app, { version: packageVersion() });
  if (options.accessControl) {
    await registerAccessControl(app, options.store, {
      ...options.accessControl,
      writeStore: options.accessControl.writeStore ?? options.primaryStore,
    });
  }
  registerStrictNumbers(app);
  await registerRoutes(app, { store: options.store });
  await app.register(statusRoutes, {
    store: options.store,
    primary: options.primaryStore,
    apiVersion: options.apiVersion,
    migrations: await listMigrations(),
    ingestProgress: options.ingestProgress,
  });
  if (options.push) await registerPush(app, { ...options.push, store: options.store });
  registerUnservedRoutes(app);
  // Ingest in another process announces chain changes: the cached chain state (ETags, tip) is dropped then.
  // (A streaming replica does not replay NOTIFY: there the cached state expires by age.)
  // Not awaited: the API starts (and answers 503) while the database is unreachable.
  const listening = listenForChainState(options.store).catch((err: unknown) => {
    app.log.warn({ err }, 'not listening for chain state changes: the cached state expires by age only');
    return undefined;
  });
  app.addHook('onClose', async () => {
    await (
      await listening
    )?.();
  });
  return app;
}

import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { listenForChainState } from '../store/read/chain-state.js';
import type { Store } from '../store/store.js';
import {
  registerAccessControl,
  trustProxySetting,
  type AccessControlOptions,
} from './plugins/access-control.js';
import { conventionalHeaders, registerConventions } from './plugins/conventions.js';
import { frameworkErrorHandler, registerErrorHandling } from './plugins/errors.js';
import { registerStrictNumbers } from './plugins/strict-numbers.js';
import { registerRoutes } from './routes/index.js';

export interface ApiServerOptions {
  store: Store;
  logger: Logger;
  /** Shown in the X-API-Version header, e.g. `v0.1.0 (main:abc1234)`. */
  apiVersion: string;
  /** API keys, rate limits and trusted proxies (see plugins/access-control.ts); none when absent. */
  accessControl?: AccessControlOptions;
}

const MAX_PARAM_LENGTH = 1000;

/** The public read API (the ten endpoints of the contract and the service routes). */
export async function buildApiServer(options: ApiServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.logger.child({ door: 'api' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler(MAX_PARAM_LENGTH, conventionalHeaders(options.apiVersion)),
    // Upstream's validation stack: coerce query strings, fill defaults, drop unknown query keys.
    ajv: { customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: true } },
    trustProxy: trustProxySetting(options.accessControl),
  }).withTypeProvider<TypeBoxTypeProvider>();
  registerErrorHandling(app);
  await registerConventions(app, options.apiVersion);
  if (options.accessControl) await registerAccessControl(app, options.store, options.accessControl);
  registerStrictNumbers(app);
  await registerRoutes(app, { store: options.store });
  // Ingest in another process announces chain changes: the cached chain state (ETags, tip) is dropped then.
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

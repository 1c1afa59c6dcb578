import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { accessControlFromConfig } from '../api/plugins/access-control.js';
import { buildApiServer } from '../api/server.js';
import type { Config } from '../config.js';
import type { Store } from '../store/store.js';
import { buildObserverServer } from '../ingest/observer-server.js';
import { serviceVersion } from '../version.js';
import { createIngestor, openStore } from './runtime.js';

export type ServeMode = 'both' | 'read-only' | 'write-only';

export interface RunningService {
  api?: FastifyInstance;
  observer?: FastifyInstance;
  store: Store;
  /** Stops accepting, finishes what is in flight (requests, the message being applied), closes the pool. */
  stop(): Promise<void>;
}

/**
 * Starts the service: the public read API and/or the event observer, over one store. `read-only` serves
 * the API without the observer and without migrating; `write-only` runs the observer alone.
 */
export async function serve(
  config: Config,
  logger: Logger,
  mode: ServeMode,
  hooks: { beforeListen?: (store: Store) => Promise<void> } = {},
): Promise<RunningService> {
  const store = await openStore(config, logger, { readOnly: mode === 'read-only' });
  const servers: FastifyInstance[] = [];
  const service: RunningService = {
    store,
    async stop() {
      for (const server of servers) await server.close();
      await store.close();
    },
  };
  try {
    await hooks.beforeListen?.(store);
    if (mode !== 'read-only') {
      const ingestor = createIngestor(store, config, logger);
      service.observer = buildObserverServer({
        ingestor,
        logger,
        bodyLimitBytes: config.OBSERVER_BODY_LIMIT_MB * 1024 * 1024,
      });
      servers.push(service.observer);
      await service.observer.listen({ host: config.OBSERVER_HOST, port: config.OBSERVER_PORT });
      logger.info(`event observer listening on http://${config.OBSERVER_HOST}:${config.OBSERVER_PORT}`);
    }
    if (mode !== 'write-only') {
      service.api = await buildApiServer({
        store,
        logger,
        apiVersion: serviceVersion(),
        accessControl: accessControlFromConfig(config),
      });
      servers.push(service.api);
      await service.api.listen({ host: config.API_HOST, port: config.API_PORT });
      logger.info(`read API listening on http://${config.API_HOST}:${config.API_PORT}`);
    }
  } catch (err) {
    await service.stop();
    throw err;
  }
  return service;
}

/** Stops the service cleanly on SIGTERM / SIGINT (a second signal forces the exit). */
export function stopOnSignals(service: RunningService, logger: Logger) {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

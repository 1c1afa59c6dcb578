import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { InvalidMessageError } from '../errors.js';
import type { MessageOutcome } from './ingestor.js';
import { observerGuards } from './observer-guards.js';
import { observerPaths } from '../protocol/payloads.js';

export interface ObserverServerOptions {
  /** the Ingestor, or the thread running one (ingest-thread.ts): takes the body's bytes */
  ingestor: { take(path: string, body: Buffer): Promise<MessageOutcome> };
  logger: Logger;
  bodyLimitBytes: number;
  /** OBSERVER_SECRET: when set, only requests to /<secret>/... are taken (observer-guards.ts) */
  secret?: string;
}

/**
 * The event-observer server: the stacks-node POSTs chain events here. It answers 200 once a message is
 * committed (or found to change nothing: a duplicate); a message no node sends gets 400 (a block whose
 * parent is missing, 409) and writes nothing; any other failure (the database is down...) gets 500, so the
 * node retries the same message. A node re-sends until it gets a 200, so every non-2xx answer is listed in
 * docs/observer.md with why a real node never meets it. It serves nothing else (no read API, no API keys).
 */
export function buildObserverServer(options: ObserverServerOptions): FastifyInstance {
  const guards = observerGuards({ secret: options.secret ?? '', budgetBytes: options.bodyLimitBytes });
  const app = Fastify({
    loggerInstance: options.logger.child({ server: 'observer' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimitBytes,
    rewriteUrl: guards.rewriteUrl,
  });
  guards.register(app);
  const ingestor = guards.counting(options.ingestor);

  // Keep the exact body: its text is stored verbatim in the raw log and hashed to detect re-delivery. Kept
  // as bytes: the ingest thread decodes them, and they move there without a copy (ingest-thread.ts).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.get('/', async () => ({
    status: 'ready',
    msg: 'event observer listening for stacks-node POST messages',
  }));

  for (const path of observerPaths) {
    app.post(path, async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      try {
        const outcome = await ingestor.take(path, body);
        return reply.send({ result: 'ok', outcome });
      } catch (err) {
        if (err instanceof InvalidMessageError) {
          request.log.warn({ path, err: err.message }, 'rejected observer message');
          const statusCode = err.statusCode;
          return reply.code(statusCode).send({
            statusCode,
            error: statusCode === 409 ? 'Conflict' : 'Bad Request',
            message: err.message,
          });
        }
        request.log.error({ path, err }, 'observer message failed; the node will retry');
        return reply
          .code(500)
          .send({ statusCode: 500, error: 'Internal Server Error', message: (err as Error).message });
      }
    });
  }

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({
      statusCode: 404,
      error: 'Not Found',
      message: `no handler for ${request.method} ${request.url}`,
    }),
  );
  app.setErrorHandler((err: { statusCode?: number; message: string }, _request, reply) => {
    const statusCode = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    return reply.code(statusCode).send({
      statusCode,
      error:
        statusCode === 413 ? 'Payload Too Large' : statusCode < 500 ? 'Bad Request' : 'Internal Server Error',
      message: err.message,
    });
  });
  return app;
}

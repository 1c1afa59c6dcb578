import type { FastifyInstance } from 'fastify';

/**
 * One info line per answered request (LOG_REQUESTS): method, route pattern (`unmatched` for an unknown URL),
 * URL, status, milliseconds and the client IP (the TCP peer, or the address a trusted proxy forwarded).
 * Headers are never logged: an API key travels in one.
 */
export function registerRequestLog(app: FastifyInstance) {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ip: request.ip,
      },
      'request',
    );
    done();
  });
}

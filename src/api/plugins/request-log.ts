import { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * A request made inside the process with `inject` (the demo checking the URLs it prints) has no network
 * socket: it is not a client's, and logging it would open the operator's log with the service's own calls.
 */
const injected = (request: FastifyRequest) => !(request.raw.socket instanceof Socket);

/**
 * One info line per answered request (LOG_REQUESTS): method, route pattern (`unmatched` for an unknown URL),
 * URL, status, milliseconds and the client IP (the TCP peer, or the address a trusted proxy forwarded).
 * Headers are never logged: an API key travels in one. Requests injected in process are not logged.
 */
export function registerRequestLog(app: FastifyInstance) {
  app.addHook('onResponse', (request, reply, done) => {
    if (injected(request)) return done();
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

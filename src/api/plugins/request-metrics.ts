import type { FastifyInstance } from 'fastify';
import type { RequestMetrics } from '../../metrics.js';

/**
 * Counts every answer and its latency per route pattern (unknown URLs as `unmatched`: bounded labels).
 * One callback hook, a map lookup and an array increment per request; nothing is formatted until scraped.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: RequestMetrics) {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observe(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
}

import cors from '@fastify/cors';
import type { FastifyInstance, onSendHookHandler } from 'fastify';

export const DEPRECATION_WARNING =
  '299 - "Deprecated: See https://docs.hiro.so/stacks/api for more information"';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Marks a route deprecated: every answer carries a `Warning: 299` header. */
    deprecated?: boolean;
  }
}

/**
 * Response headers a browser script may read (CORS `Access-Control-Expose-Headers`).
 * @internal exported for its tests
 */
export const EXPOSED_HEADERS = [
  'X-API-Version',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
];

/** The CORS and version headers, for answers given before any hook runs (router errors). */
export function conventionalHeaders(apiVersion: string): Record<string, string> {
  return {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': EXPOSED_HEADERS.join(', '),
    'x-api-version': apiVersion,
  };
}

/** Headers every answer carries: CORS, the API version, no caching unless a route opts in, deprecations. */
export async function registerConventions(app: FastifyInstance, apiVersion: string) {
  await app.register(cors, {
    exposedHeaders: EXPOSED_HEADERS,
    methods: ['GET', 'HEAD', 'OPTIONS'],
    // An OPTIONS request without Origin / Access-Control-Request-Method is not a browser preflight: it
    // gets the same 204 and allowed methods, not the plugin's plain-text 400.
    strictPreflight: false,
  });
  // Callback hooks, and the deprecation decided once per route: these run on every answer, and an async hook
  // costs a promise and a turn of the microtask queue each, `request.routeOptions` a new frozen object.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('x-api-version', apiVersion);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });
  app.addHook('onRoute', (route) => {
    if (!route.config?.deprecated) return;
    const warn: onSendHookHandler = (_request, reply, payload, done) => {
      reply.header('warning', DEPRECATION_WARNING);
      done(null, payload);
    };
    route.onSend = route.onSend === undefined ? [warn] : [...[route.onSend].flat(), warn];
  });
}

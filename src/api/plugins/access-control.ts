import { isIP } from 'node:net';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { ConfigError, type Config } from '../../config.js';
import type { Store } from '../../store/store.js';
import { accessCounters, type AccessCounters } from '../../metrics.js';
import { ApiKeyRegistry, type ApiKeyIdentity } from './api-keys.js';
import { memoryRateStore } from './memory-rate-store.js';

/**
 * Routes outside access control (no key check, no limit): health, readiness, the OpenAPI document and the
 * docs page, each a route of the API server (metrics have their own port, outside the API). A path
 * matches itself and everything below it (`/doc` covers `/doc/static/x.js`).
 * A route can also opt out itself with `config: { accessControl: false }` (or skip only the limit with
 * the rate-limit plugin's own `config: { rateLimit: false }`).
 */
export const EXEMPT_ROUTE_PATHS = ['/health', '/ready', '/openapi.json', '/doc'];

/**
 * The client address of a request this process makes to its own API (`app.inject({ remoteAddress:
 * IN_PROCESS_CLIENT })`): no TCP peer has it, so such a request (the URLs `npm start` checks before it
 * prints them) is served outside access control, and counts against no client's budget.
 */
export const IN_PROCESS_CLIENT = 'in-process';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route is served to anyone, without key check or rate limit (health, docs...). */
    accessControl?: boolean;
  }
  interface FastifyRequest {
    /** The verified API key of the request, null when anonymous. */
    apiKey: ApiKeyIdentity | null;
  }
}

export interface AccessControlOptions {
  /** true: a request without a key gets 401. */
  apiKeysRequired: boolean;
  rateLimitEnabled: boolean;
  /** Requests per window per client IP without a key. */
  anonymousLimit: number;
  /** Requests per window per API key, whatever the IP. */
  keyedLimit: number;
  /** The limit window; one minute unless a test shortens it. */
  windowMs?: number;
  /** Peers whose X-Forwarded-For is believed (IPs, CIDRs, or proxy-addr names like `loopback`). */
  trustedProxies: string[];
  /** redis://… for counters shared by every instance; unset keeps them in this process. */
  redisUrl?: string;
  /**
   * How often the valid keys are re-read when nothing announced a change (`ApiKeyRegistry`): the bound on
   * a revocation or a new key reaching a read replica.
   */
  keyRefreshMs?: number;
  counters?: AccessCounters;
  /** Where key bookkeeping (last used) is written when `store` is a read-only replica: the primary. */
  writeStore?: Store;
}

const DEFAULT_WINDOW_MS = 60_000;
const DEFAULT_KEY_REFRESH_MS = 2_000;
/** Longest a request waits on Redis before being served without a limit decision. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

const NAMED_PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUSTED_PROXIES as a list; an entry that is not an IP, a CIDR or a named range stops the boot.
 * @internal exported for its tests
 */
export function parseTrustedProxies(value: string): string[] {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  for (const entry of entries) {
    if (NAMED_PROXY_RANGES.has(entry)) continue;
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const maxPrefix = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (family === 0 || rest.length > 0 || !prefixOk) {
      throw new ConfigError(
        `TRUSTED_PROXIES: "${entry}" is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal`,
      );
    }
  }
  return entries;
}

export function accessControlFromConfig(config: Config): AccessControlOptions {
  return {
    apiKeysRequired: config.API_KEYS_REQUIRED,
    rateLimitEnabled: config.RATE_LIMIT_ENABLED,
    anonymousLimit: config.RATE_LIMIT_ANON_PER_MIN,
    keyedLimit: config.RATE_LIMIT_KEY_PER_MIN,
    trustedProxies: parseTrustedProxies(config.TRUSTED_PROXIES),
    redisUrl: config.REDIS_URL || undefined,
  };
}

/** Fastify's `trustProxy`: only the configured proxies (never `true`, which would believe anyone). */
export function trustProxySetting(options: AccessControlOptions | undefined): string[] | false {
  return options && options.trustedProxies.length > 0 ? options.trustedProxies : false;
}

/** The client an IP address counts as, for the rate limit and the connection bounds: itself, or its IPv6 /64. */
export const clientNetwork = (ip: string): string => normalizeIP(ip);

/** An error the one error handler turns into `{statusCode, error, message}`. */
class AccessError extends Error {
  constructor(
    readonly statusCode: 401 | 403 | 429,
    message: string,
  ) {
    super(message);
  }
}

function isExempt(request: FastifyRequest): boolean {
  // A CORS preflight never carries the key (the browser asks first whether it may send it).
  if (request.method === 'OPTIONS') return true;
  if (request.raw.socket?.remoteAddress === IN_PROCESS_CLIENT) return true;
  const { config, url } = request.routeOptions; // (a getter building a new object each time)
  if (config?.accessControl === false) return true;
  return url !== undefined && EXEMPT_ROUTE_PATHS.some((p) => url === p || url.startsWith(`${p}/`));
}

/** Logs the first failure at once, then at most one line per interval with the count in between. */
function throttledErrorLog(log: FastifyBaseLogger, intervalMs = 10_000) {
  let lastAt = 0;
  let suppressed = 0;
  return (err: unknown, msg: string) => {
    const now = Date.now();
    if (now - lastAt < intervalMs) {
      suppressed += 1;
      return;
    }
    log.error({ err: (err as Error)?.message ?? String(err), suppressed }, msg);
    lastAt = now;
    suppressed = 0;
  };
}

/** Where a Redis URL points, without credentials, for logs. */
function redisTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'redis';
  }
}

/**
 * A Redis client that never makes a request wait for a Redis that is down: no offline queue (a command
 * while disconnected fails at once), a short command timeout, and reconnection in the background forever.
 * The client library is loaded only here, where REDIS_URL is set: importing it costs ~150 ms of every process
 * start (45 modules, measured on 2 cores), and most deployments and every test without Redis do not use it.
 */
async function connectRedis(url: string, log: FastifyBaseLogger): Promise<Redis> {
  const logError = throttledErrorLog(log);
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  redis.on('error', (err) => logError(err, `rate-limit Redis ${redisTarget(url)} unavailable`));
  try {
    await redis.connect();
    log.info(`rate-limit counters in Redis ${redisTarget(url)}`);
  } catch (err) {
    // Not fatal: requests are served without limits until Redis is back (the client keeps reconnecting).
    logError(err, `rate-limit Redis ${redisTarget(url)} unavailable at start: limits fail open`);
  }
  return redis;
}

/** The request counter (@fastify/rate-limit): per valid key, else per client network; in Redis when configured. */
async function createLimiter(app: FastifyInstance, options: AccessControlOptions, windowMs: number) {
  const redis = options.redisUrl ? await connectRedis(options.redisUrl, app.log) : undefined;
  if (redis) app.addHook('onClose', async () => redis.disconnect());
  await app.register(rateLimit, {
    // No per-route hooks: the one hook of registerAccessControl decides, after the key is known.
    global: false,
    timeWindow: windowMs,
    keyGenerator: (request) =>
      request.apiKey ? `key:${request.apiKey.id}` : `ip:${clientNetwork(request.ip)}`,
    max: (request) => (request.apiKey ? options.keyedLimit : options.anonymousLimit),
    redis,
    nameSpace: 'stacks-read-api:rate-limit:',
    // Without Redis: clients tracked in memory, the least recently seen forgotten first.
    store: redis ? undefined : memoryRateStore(100_000),
  });
  return app.createRateLimit();
}

/**
 * Access control of the read API, one `onRequest` hook on every route (and on 404s):
 * 1. the key in `X-API-Key`, if any, is verified against the valid keys this process holds in memory
 *    (`ApiKeyRegistry`: no database query per request, whatever the key);
 * 2. the request is counted (@fastify/rate-limit's stores: Redis when configured, else memory): per key for
 *    a valid key, else per client IP: a bad key counts against its IP's anonymous budget, so a client
 *    trying made-up keys is refused (429) once that budget is spent, while a valid key from the same IP is
 *    served on its own budget (the contract: a key's limit holds regardless of origin IP). Every answer
 *    gets `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds), and 429 adds `Retry-After`;
 * 3. a bad key gets 403, a missing key 401 when keys are required.
 * If the counter store fails the request is served (fail open), logged (throttled) and counted.
 */
export async function registerAccessControl(
  app: FastifyInstance,
  store: Store,
  options: AccessControlOptions,
) {
  const counters = options.counters ?? accessCounters;
  const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
  const windowText = windowMs === DEFAULT_WINDOW_MS ? 'minute' : `${windowMs / 1000} s`;
  const keys = await ApiKeyRegistry.open(store, {
    refreshMs: options.keyRefreshMs ?? DEFAULT_KEY_REFRESH_MS,
    logger: app.log,
    touchStore: options.writeStore,
  });
  app.addHook('onClose', async () => keys.close());
  app.decorateRequest('apiKey', null);

  const limiter = options.rateLimitEnabled ? await createLimiter(app, options, windowMs) : undefined;
  const logStoreError = throttledErrorLog(app.log);

  app.addHook('onRequest', async (request, reply) => {
    if (isExempt(request)) return;
    const limited = limiter !== undefined && request.routeOptions.config?.rateLimit !== false;
    const presented = request.headers['x-api-key'];
    let invalidKey = false;
    if (presented !== undefined && presented !== '') {
      // Several X-API-Key headers are not one key.
      request.apiKey = typeof presented === 'string' ? await keys.verify(presented) : null;
      invalidKey = request.apiKey === null;
    }

    if (limiter && limited) {
      const max = request.apiKey ? options.keyedLimit : options.anonymousLimit;
      let result: Awaited<ReturnType<typeof limiter>> | undefined;
      try {
        result = await limiter(request);
      } catch (err) {
        counters.rateLimitStoreErrors += 1;
        logStoreError(err, 'rate-limit store failed: request served without a limit');
      }
      if (result && !result.isAllowed) {
        reply.header('ratelimit-limit', result.max);
        reply.header('ratelimit-remaining', result.remaining);
        reply.header('ratelimit-reset', result.ttlInSeconds);
        if (result.isExceeded) {
          counters.rejected[429] += 1;
          const retryAfter = Math.max(1, result.ttlInSeconds);
          reply.header('retry-after', retryAfter);
          const who = request.apiKey ? 'this API key' : 'anonymous clients of this IP address';
          throw new AccessError(
            429,
            `Rate limit exceeded: ${result.max} requests per ${windowText} for ${who}; retry in ${retryAfter} s`,
          );
        }
      } else {
        // Fail open: no count is known, the whole window is announced.
        reply.header('ratelimit-limit', max);
        reply.header('ratelimit-remaining', max);
        reply.header('ratelimit-reset', Math.ceil(windowMs / 1000));
      }
    }

    if (invalidKey) {
      counters.rejected[403] += 1;
      throw new AccessError(403, 'The API key in X-API-Key is invalid or revoked');
    }
    if (!request.apiKey && options.apiKeysRequired) {
      counters.rejected[401] += 1;
      throw new AccessError(401, 'An API key is required: send it in the X-API-Key header');
    }
    if (request.apiKey) counters.admitted.keyed += 1;
    else counters.admitted.anonymous += 1;
  });
}

/**
 * Counters of the access-control layer, for the metrics endpoint to publish. One process-wide instance
 * (`accessCounters`) is used unless a server is given its own (tests do, to count in isolation).
 */
export class AccessCounters {
  /** Requests served without a rate-limit decision because the counter store (Redis) failed: fail open. */
  rateLimitStoreErrors = 0;
  /** Requests refused by the access-control layer, by status: 401 no key, 403 bad key, 429 over the limit. */
  readonly rejected = { 401: 0, 403: 0, 429: 0 };
  /** Requests admitted, by client class. */
  readonly admitted = { anonymous: 0, keyed: 0 };
}

export const accessCounters = new AccessCounters();

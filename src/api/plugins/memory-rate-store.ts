import type { FastifyRateLimitStore } from '@fastify/rate-limit';
import { caches } from '../../caches.js';

interface Window {
  count: number;
  startedAt: number;
}

type Result = { current: number; ttl: number };
type Callback = (error: Error | null, result?: Result) => void;

/**
 * Fixed-window request counters in process memory, for @fastify/rate-limit when there is no Redis.
 *
 * Why not the plugin's own LocalStore: it answers every request of a key with the one counter object it
 * keeps, and the request reads it only after an `await`; a pipelined burst (all its requests parsed from
 * one read of the socket) therefore saw the count of the whole burst, so 51 requests in a fresh window of
 * 50 all got 429. Each answer here is a snapshot of the count at that request.
 *
 * The least recently counted keys are forgotten first once `maxKeys` are tracked (Map keeps insertion
 * order; a counted key is moved to the end).
 */
export function memoryRateStore(maxKeys: number) {
  return class MemoryRateStore implements FastifyRateLimitStore {
    private readonly windows = new Map<string, Window>();

    constructor() {
      caches.join(
        {
          name: 'rate-limit windows',
          layer: 'access control',
          key: 'a client: its API key, else its IP network',
          invalidatedBy: "the end of the client's window",
          bound: `${maxKeys.toLocaleString('en')} clients, the least recently counted forgotten first`,
          file: 'src/api/plugins/memory-rate-store.ts',
        },
        this,
      );
    }

    incr(key: string, callback: Callback, timeWindow: number) {
      const now = Date.now();
      let window = this.windows.get(key);
      if (window && window.startedAt + timeWindow > now) {
        window.count += 1;
        this.windows.delete(key);
      } else {
        window = { count: 1, startedAt: now };
      }
      this.windows.set(key, window);
      if (this.windows.size > maxKeys) this.windows.delete(this.windows.keys().next().value as string);
      callback(null, { current: window.count, ttl: window.startedAt + timeWindow - now });
    }

    /** The count so far, without counting (`{ increment: false }`). */
    read(key: string, callback: Callback, timeWindow: number) {
      const now = Date.now();
      const window = this.windows.get(key);
      if (!window || window.startedAt + timeWindow <= now) callback(null, { current: 0, ttl: 0 });
      else callback(null, { current: window.count, ttl: window.startedAt + timeWindow - now });
    }

    child(): FastifyRateLimitStore {
      return new MemoryRateStore();
    }
  };
}

import type { PushLimits } from '../../src/push/index.js';

// What the live-push tests share: the limits of a test server, and the events a client receives.

/** Limits no test reaches unless it means to. */
export const TEST_PUSH_LIMITS: PushLimits = {
  maxConnectionsPerIp: 10,
  maxConnectionsPerKey: 10,
  maxSubscriptions: 100,
  maxMessageBytes: 16384,
  maxBufferedBytes: 1024 * 1024,
  pingIntervalMs: 20_000,
};

/** Events a test's client receives, in order, and a way to wait for the next ones. */
export class Received<T> {
  readonly items: T[] = [];
  private waiters: (() => void)[] = [];

  push = (item: T) => {
    this.items.push(item);
    for (const w of this.waiters.splice(0)) w();
  };

  /** Resolves once `count` items in all have arrived (fails after `timeoutMs`). */
  async atLeast(count: number, timeoutMs = 10_000): Promise<T[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.items.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`waited for ${count} events, got ${this.items.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.items.slice(0, count);
  }
}

import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Asks `probe` until it gives a value (a throw counts as not yet), every `everyMs`; throws after `timeoutMs`
 * saying what was awaited.
 */
export async function poll<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 60_000, everyMs = 20 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

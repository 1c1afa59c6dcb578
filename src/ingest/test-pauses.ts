import type { Logger } from 'pino';

/**
 * A test hook that holds each message for `ms` (a crash-safety test kills the process while one waits
 * there); undefined, so no hook at all, unless set.
 */
export function testPause(ms: number, logger: Logger, name: string) {
  if (ms <= 0) return undefined;
  return async (path: string) => {
    logger.warn({ path, ms }, `${name}: pausing`);
    await new Promise((resolve) => setTimeout(resolve, ms));
  };
}

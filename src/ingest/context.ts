import type { Logger } from 'pino';

/** What every message handler needs besides the payload. */
export interface ApplyContext {
  /** When the message was received (unix seconds): the live clock, or the recorded time on replay. */
  receivedAt: number;
  isMainnet: boolean;
  logger: Logger;
}

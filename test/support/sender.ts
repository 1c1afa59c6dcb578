import type { RecordedMessage } from '../../src/protocol/tsv.js';
import { sleep } from './serve-process.js';

// A stacks-node's event dispatcher, as the reliability tests need it: it posts messages in order, and re-sends
// a message until the observer answers 200, however long that takes (connection refused while the indexer
// restarts, 5xx while its database is down). A 4xx is not retried here: in these tests it is a bug.

export interface SendStats {
  messages: number;
  /** POSTs beyond the first for each message */
  resent: number;
  /** messages that needed more than one POST */
  retriedMessages: number;
  /** what the observer said to the POST that got the 200, for messages that were re-sent */
  outcomesAfterRetry: Record<string, number>;
  /** non-200 answers, by status (0 = no answer: connection refused or reset) */
  failures: Record<number, number>;
}

export interface SendOptions {
  /** the observer's base URL; a function when it may change between attempts */
  url: () => string;
  /** awaited before each message is first sent (fault injection happens here) */
  beforeSend?: (index: number, message: RecordedMessage) => Promise<void> | void;
  /** pause between attempts (default 100 ms) */
  retryDelayMs?: number;
  /** give up on a message after this long (default 5 minutes) */
  giveUpAfterMs?: number;
  /** give up on one POST after this long (default 2 minutes: a large block may take that long) */
  attemptTimeoutMs?: number;
}

export function newSendStats(): SendStats {
  return { messages: 0, resent: 0, retriedMessages: 0, outcomesAfterRetry: {}, failures: {} };
}

/** POSTs one message until a 200; returns the observer's outcome (`applied`, `duplicate`, `skipped`). */
export async function deliver(
  message: RecordedMessage,
  options: SendOptions,
  stats: SendStats,
): Promise<string> {
  const started = Date.now();
  let attempts = 0;
  for (;;) {
    attempts++;
    let status = 0;
    let text = '';
    try {
      const res = await fetch(`${options.url()}${message.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: message.payload,
        signal: AbortSignal.timeout(options.attemptTimeoutMs ?? 120_000),
      });
      status = res.status;
      text = await res.text();
    } catch {
      status = 0;
    }
    if (status === 200) {
      const outcome = (JSON.parse(text) as { outcome: string }).outcome;
      stats.messages++;
      if (attempts > 1) {
        stats.resent += attempts - 1;
        stats.retriedMessages++;
        stats.outcomesAfterRetry[outcome] = (stats.outcomesAfterRetry[outcome] ?? 0) + 1;
      }
      return outcome;
    }
    stats.failures[status] = (stats.failures[status] ?? 0) + 1;
    if (status >= 400 && status < 500) {
      throw new Error(
        `message ${message.id} (${message.path}) refused with ${status}: ${text.slice(0, 300)}`,
      );
    }
    if (Date.now() - started > (options.giveUpAfterMs ?? 300_000)) {
      throw new Error(`message ${message.id} (${message.path}) not accepted after ${attempts} attempts`);
    }
    await sleep(options.retryDelayMs ?? 100);
  }
}

/** Sends every message in order, each until it is accepted. */
export async function deliverAll(messages: RecordedMessage[], options: SendOptions): Promise<SendStats> {
  const stats = newSendStats();
  for (let i = 0; i < messages.length; i++) {
    await options.beforeSend?.(i, messages[i]);
    await deliver(messages[i], options, stats);
  }
  return stats;
}

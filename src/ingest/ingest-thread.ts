import type { MessagePort, Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { startModuleWorker, transferableBytes } from '../worker-threads.js';
import { InvalidMessageError, MessageConflictError } from '../errors.js';
import type { IngestProgress } from './ingest-progress.js';
import type { MessageOutcome, IngestorOptions } from './ingestor.js';

// Ingest in a thread of its own: the worker (ingest-worker.ts) runs the Ingestor on its own database
// connection, so a large message neither blocks this thread's event loop (JSON parsing, decoding and building
// its rows take seconds for a 40 MB block) nor, on PostgreSQL, holds the connection the API reads on. On
// PGlite the database stays on this thread (the worker's connection reaches its one session through a
// MessagePort) and reads wait for the worker's transaction, but not for the decoding, done before BEGIN.
// This thread only hands each message's bytes over (transferred, not copied) and answers the node when the
// worker says how it ended.

export interface IngestWorkerData {
  databaseUrl: string;
  connectTimeoutMs: number;
  isMainnet: boolean;
  logLevel: string;
  pauseBeforeCommitMs: number;
  pauseAfterCommitMs: number;
  /** PGlite: the port to this thread's session (`Database.serveOverPort`); a new one per worker started. */
  pglitePort?: MessagePort;
}

export type ToIngestWorker =
  { kind: 'take'; id: number; path: string; body: ArrayBuffer; receivedAt: number } | { kind: 'close' };

/** One `IngestorOptions.onMessage` call made in the worker. */
export interface IngestMetric {
  path: string;
  outcome: Parameters<NonNullable<IngestorOptions['onMessage']>>[1];
  seconds: number;
}

export type FromIngestWorker =
  | { kind: 'ready' }
  | { kind: 'log'; line: string }
  | {
      kind: 'done';
      id: number;
      outcome?: MessageOutcome;
      error?: { message: string; statusCode?: number };
      /**
       * The metrics recorded since the last answer: the message's own (the Ingestor records it before its
       * promise settles), and any of another message settled in between. They ride with the answer rather
       * than in a message of their own, which woke this thread once more per observer message for nothing.
       */
      metrics: IngestMetric[];
    };

export interface IngestThreadOptions {
  workerData: Omit<IngestWorkerData, 'pglitePort'>;
  /** PGlite: opens a port to the session for each worker started (`Database.serveOverPort`). */
  connectPglite?: () => MessagePort;
  logger: Logger;
  onMessage?: IngestorOptions['onMessage'];
  /** Called when a message was applied, before its answer: this process drops what it cached of the chain. */
  onApplied?: () => void;
  /** Told of each message received and taken (readiness: ingest-progress.ts). */
  progress?: IngestProgress;
}

interface Pending {
  resolve: (outcome: MessageOutcome) => void;
  reject: (err: Error) => void;
}

/** pino's numeric levels, for the worker's log lines. */
const LEVELS: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** The observer's `take`, run by a worker thread; messages are committed one at a time, in order. */
export class IngestThread {
  private worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closing = false;

  constructor(private readonly options: IngestThreadOptions) {
    this.worker = this.start();
  }

  private start(): Worker {
    const pglitePort = this.options.connectPglite?.();
    const workerData: IngestWorkerData = { ...this.options.workerData, pglitePort };
    const worker = startModuleWorker(import.meta.url, 'ingest-worker', {
      workerData,
      transferList: pglitePort ? [pglitePort] : [],
    });
    worker.on('message', (message: FromIngestWorker) => this.receive(message));
    worker.on('error', (err) => this.options.logger.error({ err }, 'ingest thread failed'));
    worker.on('exit', (code) => {
      // Messages in flight are answered 500 (the node re-sends them); a new thread takes the next ones.
      for (const entry of this.pending.values())
        entry.reject(new Error(`the ingest thread stopped (${code})`));
      this.pending.clear();
      if (this.closing) return;
      this.options.logger.error({ code }, 'ingest thread stopped: starting another');
      this.worker = this.start();
    });
    return worker;
  }

  private receive(message: FromIngestWorker): void {
    switch (message.kind) {
      case 'log': {
        const { level, msg, ...fields } = JSON.parse(message.line) as { level: number; msg?: string };
        this.options.logger[LEVELS[level] ?? 'info'](fields, msg);
        return;
      }
      case 'done': {
        const onMessage = this.options.onMessage;
        if (onMessage) for (const m of message.metrics) onMessage(m.path, m.outcome, m.seconds);
        const entry = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (!entry) return;
        if (message.error) return entry.reject(asError(message.error));
        if (message.outcome === 'applied') this.options.onApplied?.();
        entry.resolve(message.outcome!);
        return;
      }
    }
  }

  /** `body` is the message's bytes; its memory moves to the worker (`body` is empty afterwards). */
  take(path: string, body: Uint8Array, receivedAt: Date = new Date()): Promise<MessageOutcome> {
    const progress = this.options.progress;
    progress?.received();
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, {
        resolve: (outcome) => {
          progress?.taken();
          resolve(outcome);
        },
        reject,
      });
      const bytes = transferableBytes(body);
      const message: ToIngestWorker = {
        kind: 'take',
        id,
        path,
        body: bytes,
        receivedAt: receivedAt.getTime(),
      };
      this.worker.postMessage(message, [bytes]);
    });
  }

  /** Lets the thread finish the messages it holds, closes its connection and stops it. */
  async close(): Promise<void> {
    this.closing = true;
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.postMessage({ kind: 'close' } satisfies ToIngestWorker);
    await exited;
  }
}

/** The worker's error as the observer tells them apart: the message's fault (4xx), or not (500). */
function asError(error: { message: string; statusCode?: number }): Error {
  if (error.statusCode === 409) return new MessageConflictError(error.message);
  if (error.statusCode !== undefined) return new InvalidMessageError(error.message);
  return new Error(error.message);
}

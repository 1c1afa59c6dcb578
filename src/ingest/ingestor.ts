import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { TransactionSql } from '../store/db.js';
import { AnalyzeSchedule } from '../store/maintenance.js';
import { chainStateChanged } from '../store/read/chain-state.js';
import type { Store } from '../store/store.js';
import { beginLoggedMessage, markMessageSkipped } from '../store/write/message-log.js';
import { applyNewBlock, decodeBlock } from './apply-block.js';
import { applyNewBurnBlock } from './apply-burn-block.js';
import { applyDropMempoolTxs, applyNewMempoolTxs, decodeMempoolTxs } from './apply-mempool.js';
import { applyNewMicroblocks } from './apply-microblocks.js';
import { InvalidMessageError } from './chain-rows.js';
import type { ApplyContext, DecodedBlock, DecodedMempoolTxs } from './context.js';
import { checkMicroblocksMessage } from './message-checks.js';
import {
  isObserverPath,
  payloadValidators,
  type DropMempoolTx,
  type NewBlock,
  type NewBurnBlock,
  type NewMempoolTx,
  type NewMicroblocks,
  type ObserverPath,
} from '../protocol/payloads.js';

export { InvalidMessageError };

const utf8 = new TextDecoder();

/** A message's receipt time as the index keeps it: unix seconds. */
const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** Thrown to roll a message's transaction back, its raw-log row included: the message changed nothing. */
class NothingToCommit extends Error {
  constructor(readonly outcome: 'duplicate' | 'reannounced') {
    super(outcome);
  }
}

/** The message was not applied: an unknown path, malformed JSON, or a payload missing required fields. */
class UnknownPathError extends InvalidMessageError {}

export type ApplyOutcome =
  /** applied (it may still have changed nothing, e.g. microblocks off the tip; it is logged) */
  | 'applied'
  /**
   * an identical message was applied before (or skipped before and still does not fit), or a block already
   * indexed came again in another serialization: nothing done, not even logged
   */
  | 'duplicate'
  /**
   * a block (or burn block) already indexed came again saying something else: nothing done, not even
   * logged; the stored one is kept (apply-block.ts `compareWithStored` says why it is not refused)
   */
  | 'reannounced'
  /**
   * the message did not fit the index and changed nothing (microblocks not built on the chain tip): kept in
   * the raw log, answered 200 as stacks-node expects, and applied if the same message comes again later
   */
  | 'skipped';

export interface IngestorOptions {
  isMainnet: boolean;
  logger: Logger;
  /** Test hook: called inside the message's transaction after the handler ran, before commit. */
  beforeCommit?: (path: ObserverPath) => Promise<void> | void;
  /** Test hook: called once the message is committed, before `apply` resolves (and the 200 is sent). */
  afterCommit?: (path: ObserverPath) => Promise<void> | void;
  /** Called once per message with how it ended and how long it took (queue wait excluded): metrics. */
  onMessage?: (path: string, outcome: ApplyOutcome | 'invalid' | 'failed', seconds: number) => void;
  /** Test switch: see `ApplyContext.readBackRows`. */
  readBackRows?: boolean;
}

/**
 * A handler returns `'skipped'` when the message changed nothing because it does not fit the index, and
 * `'duplicate'` or `'reannounced'` when it names what the index already holds (its transaction is then
 * rolled back).
 */
type Handler = (sql: TransactionSql, payload: never, ctx: ApplyContext) => Promise<unknown>;

const handlers: Record<ObserverPath, Handler> = {
  '/new_block': (sql, msg: NewBlock, ctx) => applyNewBlock(sql, msg, ctx),
  '/new_microblocks': async (sql, msg: NewMicroblocks, ctx) =>
    (await applyNewMicroblocks(sql, msg, ctx)) ? 'applied' : 'skipped',
  '/new_mempool_tx': (sql, msg: NewMempoolTx, ctx) => applyNewMempoolTxs(sql, msg, ctx),
  '/drop_mempool_tx': (sql, msg: DropMempoolTx, ctx) => applyDropMempoolTxs(sql, msg, ctx),
  '/new_burn_block': (sql, msg: NewBurnBlock, ctx) => applyNewBurnBlock(sql, msg, ctx),
  // kept in the raw log only
  '/attachments/new': async () => {},
  '/stackerdb_chunks': async () => {},
  '/proposal_response': async () => {},
  '/mined_block': async () => {},
  '/mined_microblock': async () => {},
  '/mined_nakamoto_block': async () => {},
};

/** A message parsed, validated and hashed, ready to be applied (`Ingestor.prepare`). */
export interface PreparedMessage {
  path: ObserverPath;
  body: string;
  payload: unknown;
  contentHash: string;
  receivedAt: Date;
  /** `/new_block`: its rows, decoded ahead */
  decoded?: DecodedBlock;
  /** `/new_mempool_tx`: its rows, decoded ahead */
  decodedMempoolTxs?: DecodedMempoolTxs;
}

/**
 * The single entry point of every event-observer message, live or replayed: parse, validate, and apply in
 * one database transaction together with its raw-log row. Messages are applied one at a time in arrival
 * order. A message identical to one already applied (the node re-sending after a lost answer) is a no-op.
 */
export class Ingestor {
  private queue: Promise<unknown> = Promise.resolve();
  private lastMessageAt = 0;
  private readonly analyzeSchedule: AnalyzeSchedule;

  constructor(
    private readonly store: Store,
    private readonly options: IngestorOptions,
  ) {
    this.analyzeSchedule = new AnalyzeSchedule(
      store.engine,
      ({ txs, ms }) => options.logger.debug({ txs, ms }, 'tables analyzed'),
      (err) =>
        options.logger.warn({ err }, 'analyzing the tables failed: tried again after the next message'),
    );
  }

  /** Resolves once the work ingest runs in the background after a message (an ANALYZE) has ended. */
  settled(): Promise<void> {
    return this.analyzeSchedule.settled();
  }

  /** Unix time (ms) the last message was applied, 0 if none since start. */
  get lastAppliedAt(): number {
    return this.lastMessageAt;
  }

  /** `body` as received: its text, or its bytes (UTF-8). */
  apply(path: string, body: string | Uint8Array, receivedAt: Date = new Date()): Promise<ApplyOutcome> {
    const started = performance.now();
    let prepared: PreparedMessage;
    try {
      prepared = this.prepare(path, body, receivedAt);
    } catch (err) {
      // A bounded set of label values: the known paths, and `unknown` for anything else.
      const label = isObserverPath(path) ? path : 'unknown';
      this.options.onMessage?.(label, 'invalid', (performance.now() - started) / 1000);
      return Promise.reject(err as Error);
    }
    return this.applyPrepared(prepared);
  }

  /**
   * Parses, validates and hashes a message without touching the database, so a caller holding the next
   * message (a replay) can do this CPU work while the database applies the previous one.
   */
  prepare(path: string, received: string | Uint8Array, receivedAt: Date = new Date()): PreparedMessage {
    if (!isObserverPath(path)) throw new UnknownPathError(`no handler for event-observer path ${path}`);
    // the text is what the raw log keeps and what the content hash covers, however the body arrived
    const body = typeof received === 'string' ? received : utf8.decode(received);
    let payload: unknown;
    try {
      payload = JSON.parse(body);
    } catch (err) {
      throw new InvalidMessageError(`${path}: body is not valid JSON (${(err as Error).message})`);
    }
    const validator = payloadValidators[path];
    if (!validator.Check(payload)) {
      const [first] = validator.Errors(payload);
      const where = first?.instancePath ? ` at ${first.instancePath}` : '';
      throw new InvalidMessageError(
        `${path}: invalid payload${where}: ${first?.message ?? 'unexpected shape'}`,
      );
    }
    if (path === '/new_microblocks') checkMicroblocksMessage(payload as NewMicroblocks);
    const contentHash = createHash('sha256').update(path).update('\n').update(body).digest('hex');
    // the CPU-heavy part of a block (decoding its transactions into rows, and their statements' literals)
    // needs no database either
    const decoded =
      path === '/new_block'
        ? decodeBlock(payload as NewBlock, this.options.isMainnet, this.store.rowsPerStatement)
        : undefined;
    const decodedMempoolTxs =
      path === '/new_mempool_tx'
        ? decodeMempoolTxs(payload as NewMempoolTx, unixSeconds(receivedAt))
        : undefined;
    return { path, body, payload, contentHash, receivedAt, decoded, decodedMempoolTxs };
  }

  /**
   * Applies a prepared message after those already queued. `writesSent`: see `ApplyContext.writesSent`
   * (a block calls it once its writes are sent; any other message when its transaction ends).
   */
  applyPrepared(message: PreparedMessage, writesSent?: () => void): Promise<ApplyOutcome> {
    const onMessage = this.options.onMessage;
    const run = this.queue.then(
      onMessage
        ? () => this.applyTimed(message, onMessage, writesSent)
        : () => this.applyNow(message, writesSent),
    );
    this.queue = run.catch(() => {});
    return run;
  }

  private async applyTimed(
    message: PreparedMessage,
    onMessage: NonNullable<IngestorOptions['onMessage']>,
    writesSent?: () => void,
  ): Promise<ApplyOutcome> {
    const started = performance.now();
    try {
      const outcome = await this.applyNow(message, writesSent);
      onMessage(message.path, outcome, (performance.now() - started) / 1000);
      return outcome;
    } catch (err) {
      const outcome = err instanceof InvalidMessageError ? 'invalid' : 'failed';
      onMessage(message.path, outcome, (performance.now() - started) / 1000);
      throw err;
    }
  }

  private async applyNow(message: PreparedMessage, writesSent?: () => void): Promise<ApplyOutcome> {
    const { path, body, payload, receivedAt } = message;
    const ctx: ApplyContext = {
      receivedAt: unixSeconds(receivedAt),
      isMainnet: this.options.isMainnet,
      logger: this.options.logger,
      decoded: message.decoded,
      decodedMempoolTxs: message.decodedMempoolTxs,
      contentHash: message.contentHash,
      readBackRows: this.options.readBackRows,
      writesSent,
    };
    const started = performance.now();
    const outcome = await this.applyInTransaction(message, ctx);
    if (outcome === 'applied') chainStateChanged(this.store);
    if (outcome !== 'duplicate' && outcome !== 'reannounced') await this.options.afterCommit?.(path);
    this.lastMessageAt = Date.now();
    const ms = Math.round(performance.now() - started);
    if (path === '/new_block' && outcome === 'applied') {
      // one line per block at info: what an operator watches while the chain comes in
      const block = payload as NewBlock;
      this.options.logger.info(
        { height: block.block_height, txs: block.transactions.length, ms },
        'block indexed',
      );
    } else {
      this.options.logger.debug({ path, outcome, ms, bytes: body.length }, 'observer message');
    }
    if (outcome === 'applied') this.keepStatisticsFresh(path, payload);
    return outcome;
  }

  /**
   * One message in one transaction. The message is logged first; a message already logged (and not
   * skipped) is a re-delivery. A message that does not fit the index (the handler says `skipped`) stays in
   * the log marked `skipped`, so it does not count as delivered: the same message coming again once it fits
   * is applied (migration 008: the unique index on content_hash covers only the rows not skipped). A
   * message the handler finds already applied in other words (a block re-serialized) leaves no trace: the
   * log keeps one message per block, so a replay or an export holds each block once.
   */
  private async applyInTransaction(message: PreparedMessage, ctx: ApplyContext): Promise<ApplyOutcome> {
    const { path, payload, contentHash } = message;
    try {
      return await this.store.transaction(async (sql) => {
        const logged = await beginLoggedMessage(sql, this.store.engine, message);
        if (!logged) return 'duplicate' as const;
        const result = await handlers[path](sql, payload as never, ctx);
        if (result === 'duplicate' || result === 'reannounced') throw new NothingToCommit(result);
        const skipped = result === 'skipped';
        if (skipped && (await markMessageSkipped(sql, contentHash)) === 'duplicate')
          return 'duplicate' as const;
        await this.options.beforeCommit?.(path);
        return skipped ? ('skipped' as const) : ('applied' as const);
      });
    } catch (err) {
      if (err instanceof NothingToCommit) return err.outcome;
      throw asInvalidMessage(err, path) ?? err;
    }
  }

  /**
   * While the index is young, ingest analyzes the tables it grows (store/maintenance.ts says why), in the
   * background: the message is answered without waiting for it.
   */
  private keepStatisticsFresh(path: ObserverPath, payload: unknown): void {
    let txs: number;
    if (path === '/new_block') txs = (payload as NewBlock).transactions.length;
    else if (path === '/new_mempool_tx') txs = (payload as NewMempoolTx).length;
    else return;
    this.analyzeSchedule.afterIndexing(this.store.sql, txs);
  }
}

/**
 * A failure caused by the message's content rather than by the database being unavailable: a value
 * PostgreSQL refuses (SQLSTATE class 22, data exception, e.g. a number out of a column's range) or nesting
 * too deep to serialize. The payload validators are meant to catch these first; this is the safety net that
 * keeps such a message a 400 instead of a 500.
 */
function asInvalidMessage(err: unknown, path: string): InvalidMessageError | undefined {
  if (err instanceof InvalidMessageError) return undefined;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('22')) {
    return new InvalidMessageError(`${path}: a value cannot be stored: ${(err as Error).message}`);
  }
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    return new InvalidMessageError(`${path}: the payload nests too deeply`);
  }
  return undefined;
}

import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { TransactionSql } from '../store/db.js';
import { databaseFailure } from '../store/database-errors.js';
import { AnalyzeSchedule } from '../store/maintenance.js';
import { chainStateChanged } from '../store/read/chain-state.js';
import { indexedBlocks, newestLoggedMessages } from '../store/read/message-log.js';
import type { Store } from '../store/store.js';
import { beginLoggedMessage, markMessageSkipped, resumeLoggedMessage } from '../store/write/message-log.js';
import { applyNewBlock } from './apply-block.js';
import { decodeBlock } from './decode-block.js';
import { applyNewBurnBlock } from './apply-burn-block.js';
import { applyDropMempoolTxs, applyNewMempoolTxs, decodeMempoolTxs } from './apply-mempool.js';
import { applyNewMicroblocks } from './apply-microblocks.js';
import { InvalidMessageError } from '../errors.js';
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

const utf8 = new TextDecoder();

/** A message's receipt time as the index keeps it: unix seconds. */
const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** How many of the newest logged blocks (and burn blocks) the start-up check reads (`recoverLoggedNotIndexed`). */
const CHECKED_AT_START = 16;

/** Thrown to roll a message's transaction back, its raw-log row included: the message changed nothing. */
class NothingToCommit extends Error {
  constructor(readonly outcome: 'duplicate' | 'reannounced') {
    super(outcome);
  }
}

/** The message was not applied: an unknown path, malformed JSON, or a payload missing required fields. */
class UnknownPathError extends InvalidMessageError {}

export type MessageOutcome =
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
  /** Test hook: called once the message is committed, before `take` resolves (and the 200 is sent). */
  afterCommit?: (path: ObserverPath) => Promise<void> | void;
  /** Called once per message with how it ended and how long it took (queue wait excluded): metrics. */
  onMessage?: (path: string, outcome: MessageOutcome | 'invalid' | 'failed', seconds: number) => void;
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

/** A message parsed, validated and hashed, ready to be queued (`Ingestor.prepare`, then `Ingestor.enqueue`). */
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
 * The single entry point of every event-observer message, live or replayed. `take` = `prepare` (parse,
 * validate, hash, decode: no database) then `enqueue` (wait for the messages before it), then `commit`: one
 * database transaction that logs the message and runs its handler (`apply*`). Messages are committed one at
 * a time in arrival order. A message identical to one already committed (the node re-sending after a lost
 * answer) is a no-op.
 */
export class Ingestor {
  private queue: Promise<unknown> = Promise.resolve();
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

  /** Prepares and enqueues a message. `body` as received: its text, or its bytes (UTF-8). */
  take(path: string, body: string | Uint8Array, receivedAt: Date = new Date()): Promise<MessageOutcome> {
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
    return this.enqueue(prepared);
  }

  /**
   * Parses, validates and hashes a message without touching the database, so a caller holding the next
   * message (a replay) can do this CPU work while the database commits the previous one.
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
   * Ingests a prepared message after those already queued. `writesSent`: see `ApplyContext.writesSent`
   * (a block calls it once its writes are sent; any other message when its transaction ends).
   */
  enqueue(message: PreparedMessage, writesSent?: () => void): Promise<MessageOutcome> {
    const onMessage = this.options.onMessage;
    const run = this.queue.then(
      onMessage
        ? () => this.ingestTimed(message, onMessage, writesSent)
        : () => this.ingest(message, writesSent),
    );
    this.queue = run.catch(() => {});
    return run;
  }

  /** `ingest`, telling `onMessage` how it ended and how long it took. */
  private async ingestTimed(
    message: PreparedMessage,
    onMessage: NonNullable<IngestorOptions['onMessage']>,
    writesSent?: () => void,
  ): Promise<MessageOutcome> {
    const started = performance.now();
    try {
      const outcome = await this.ingest(message, writesSent);
      onMessage(message.path, outcome, (performance.now() - started) / 1000);
      return outcome;
    } catch (err) {
      const outcome = err instanceof InvalidMessageError ? 'invalid' : 'failed';
      onMessage(message.path, outcome, (performance.now() - started) / 1000);
      throw err;
    }
  }

  private context(message: PreparedMessage, writesSent?: () => void): ApplyContext {
    return {
      receivedAt: unixSeconds(message.receivedAt),
      isMainnet: this.options.isMainnet,
      logger: this.options.logger,
      decoded: message.decoded,
      decodedMempoolTxs: message.decodedMempoolTxs,
      contentHash: message.contentHash,
      readBackRows: this.options.readBackRows,
      writesSent,
    };
  }

  /** Commits a message, then tells what follows a commit: readers, the test hook, the log, the statistics. */
  private async ingest(message: PreparedMessage, writesSent?: () => void): Promise<MessageOutcome> {
    const { path, body, payload } = message;
    const ctx = this.context(message, writesSent);
    const started = performance.now();
    const outcome = await this.commit(message, ctx);
    if (outcome === 'applied') chainStateChanged(this.store);
    if (outcome !== 'duplicate' && outcome !== 'reannounced') await this.options.afterCommit?.(path);
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
  private async commit(
    message: PreparedMessage,
    ctx: ApplyContext,
    log: 'log' | 'logged already' = 'log',
  ): Promise<MessageOutcome> {
    const { path, payload, contentHash } = message;
    try {
      return await this.store.transaction(async (sql) => {
        if (log === 'logged already') await resumeLoggedMessage(sql, this.store.engine);
        else if (!(await beginLoggedMessage(sql, this.store.engine, message))) return 'duplicate' as const;
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
   * Commits again, from the raw log, the blocks and burn blocks it holds as delivered that the index lacks. A log
   * row is committed with its message, so none should exist; a database written by a version whose lost
   * connection could commit the row alone holds one (the node's re-send then found it a duplicate, and every
   * later block was refused for want of its parent). Such a message is the newest of its kind when the chain
   * stops, so the newest CHECKED_AT_START of each are checked; each missing one is applied in its own
   * transaction, in log order, keeping its row. Run before the first message is taken. Returns the ids applied.
   */
  async recoverLoggedNotIndexed(): Promise<number[]> {
    const logged = (
      await Promise.all(
        (['/new_burn_block', '/new_block'] as const).map((path) =>
          newestLoggedMessages(this.store.sql, path, CHECKED_AT_START),
        ),
      )
    ).flat();
    const hashOf = (row: (typeof logged)[number]) => {
      const payload = JSON.parse(row.payload) as { index_block_hash?: string; burn_block_hash?: string };
      return row.path === '/new_block' ? payload.index_block_hash : payload.burn_block_hash;
    };
    const hashes = logged.map(hashOf);
    const held = await indexedBlocks(
      this.store.sql,
      logged.flatMap((row, i) => (row.path === '/new_block' && hashes[i] ? [hashes[i]] : [])),
      logged.flatMap((row, i) => (row.path === '/new_burn_block' && hashes[i] ? [hashes[i]] : [])),
    );
    const missing = logged.filter((_, i) => hashes[i] && !held.has(hashes[i])).sort((a, b) => a.id - b.id);
    const applied: number[] = [];
    for (const row of missing) {
      const message = this.prepare(row.path, row.payload, row.received_at);
      try {
        // the index held none of it: applied, never a duplicate
        const outcome = await this.commit(message, this.context(message), 'logged already');
        if (outcome !== 'applied') throw new Error(`committing it found it ${outcome}`);
        applied.push(row.id);
        this.options.logger.warn(
          { id: row.id, path: row.path, hash: hashOf(row) },
          'a message logged as delivered was not indexed: applied it from the log',
        );
      } catch (err) {
        this.options.logger.error(
          { id: row.id, path: row.path, hash: hashOf(row), err },
          'a message logged as delivered is not indexed, and applying it from the log failed',
        );
      }
    }
    if (applied.length > 0) chainStateChanged(this.store);
    return applied;
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
  if (databaseFailure(err) === 'data') {
    return new InvalidMessageError(`${path}: a value cannot be stored: ${(err as Error).message}`);
  }
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    return new InvalidMessageError(`${path}: the payload nests too deeply`);
  }
  return undefined;
}

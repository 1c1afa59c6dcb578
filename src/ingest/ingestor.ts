import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { TransactionSql } from '../store/db.js';
import type { Store } from '../store/store.js';
import { insertBurnBlock } from '../store/write/burn-blocks.js';
import { lockChainTip, raiseBurnTip } from '../store/write/tip.js';
import { applyNewBlock } from './apply-block.js';
import { applyDropMempoolTxs, applyNewMempoolTxs } from './apply-mempool.js';
import { applyNewMicroblocks } from './apply-microblocks.js';
import { InvalidMessageError } from './chain-rows.js';
import type { ApplyContext } from './context.js';
import {
  isObserverPath,
  payloadValidators,
  type DropMempoolTx,
  type NewBlock,
  type NewBurnBlock,
  type NewMempoolTx,
  type NewMicroblocks,
  type ObserverPath,
} from './payloads.js';

export { InvalidMessageError };

/** The message was not applied: an unknown path, malformed JSON, or a payload missing required fields. */
export class UnknownPathError extends InvalidMessageError {}

export type ApplyOutcome =
  /** applied (it may still have changed nothing, e.g. microblocks off the tip; it is logged) */
  | 'applied'
  /** an identical message was applied before (or skipped before and still does not fit): nothing done */
  | 'duplicate'
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
}

/** A handler returns `'skipped'` when the message changed nothing because it does not fit the index. */
type Handler = (sql: TransactionSql, payload: never, ctx: ApplyContext) => Promise<unknown>;

const handlers: Record<ObserverPath, Handler> = {
  '/new_block': (sql, msg: NewBlock, ctx) => applyNewBlock(sql, msg, ctx),
  '/new_microblocks': async (sql, msg: NewMicroblocks, ctx) =>
    (await applyNewMicroblocks(sql, msg, ctx)) ? 'applied' : 'skipped',
  '/new_mempool_tx': (sql, msg: NewMempoolTx, ctx) => applyNewMempoolTxs(sql, msg, ctx),
  '/drop_mempool_tx': (sql, msg: DropMempoolTx, ctx) => applyDropMempoolTxs(sql, msg, ctx),
  '/new_burn_block': async (sql, msg: NewBurnBlock) => {
    await lockChainTip(sql);
    const added = await insertBurnBlock(sql, {
      burn_block_hash: msg.burn_block_hash,
      burn_block_height: msg.burn_block_height,
      burn_amount: String(msg.burn_amount ?? 0),
      reward_recipients: msg.reward_recipients ?? [],
      reward_slot_holders: msg.reward_slot_holders ?? [],
    });
    if (added) await raiseBurnTip(sql, msg.burn_block_height);
  },
  // kept in the raw log only
  '/attachments/new': async () => {},
  '/stackerdb_chunks': async () => {},
  '/proposal_response': async () => {},
};

/**
 * The single entry point of every event-observer message, live or replayed: parse, validate, and apply in
 * one database transaction together with its raw-log row. Messages are applied one at a time in arrival
 * order. A message identical to one already applied (the node re-sending after a lost answer) is a no-op.
 */
export class Ingestor {
  private queue: Promise<unknown> = Promise.resolve();
  private lastMessageAt = 0;

  constructor(
    private readonly store: Store,
    private readonly options: IngestorOptions,
  ) {}

  /** Unix time (ms) the last message was applied, 0 if none since start. */
  get lastAppliedAt(): number {
    return this.lastMessageAt;
  }

  apply(path: string, body: string, receivedAt: Date = new Date()): Promise<ApplyOutcome> {
    const run = this.queue.then(() => this.applyNow(path, body, receivedAt));
    this.queue = run.catch(() => {});
    return run;
  }

  private async applyNow(path: string, body: string, receivedAt: Date): Promise<ApplyOutcome> {
    if (!isObserverPath(path)) throw new UnknownPathError(`no handler for event-observer path ${path}`);
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
    const contentHash = createHash('sha256').update(path).update('\n').update(body).digest('hex');
    const ctx: ApplyContext = {
      receivedAt: Math.floor(receivedAt.getTime() / 1000),
      isMainnet: this.options.isMainnet,
      logger: this.options.logger,
    };
    const started = performance.now();
    const outcome = await this.applyInTransaction(path, body, payload, contentHash, receivedAt, ctx);
    if (outcome !== 'duplicate') await this.options.afterCommit?.(path);
    this.lastMessageAt = Date.now();
    this.options.logger.debug(
      { path, outcome, ms: Math.round(performance.now() - started), bytes: body.length },
      'observer message',
    );
    return outcome;
  }

  private async applyInTransaction(
    path: ObserverPath,
    body: string,
    payload: unknown,
    contentHash: string,
    receivedAt: Date,
    ctx: ApplyContext,
  ): Promise<ApplyOutcome> {
    try {
      return await this.store.transaction(async (sql) => {
        const [seen] = await sql`
          SELECT 1 FROM observer_messages WHERE content_hash = ${contentHash} AND NOT skipped`;
        if (seen) return 'duplicate' as const;
        const skipped = (await handlers[path](sql, payload as never, ctx)) === 'skipped';
        if (skipped) {
          // Received before and still not fitting: it changed nothing again, and is not logged twice.
          const [before] = await sql`
            SELECT 1 FROM observer_messages WHERE content_hash = ${contentHash} AND skipped LIMIT 1`;
          if (before) return 'duplicate' as const;
        }
        await sql`
          INSERT INTO observer_messages (received_at, path, payload, content_hash, skipped)
          VALUES (${receivedAt}, ${path}, ${body}, ${contentHash}, ${skipped})`;
        await this.options.beforeCommit?.(path);
        return skipped ? ('skipped' as const) : ('applied' as const);
      });
    } catch (err) {
      throw asInvalidMessage(err, path) ?? err;
    }
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

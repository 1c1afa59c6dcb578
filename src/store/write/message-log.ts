import type { Engine, TransactionSql } from '../db.js';
import { laterPiecesColumn, messagePieces, readMessageText, writeLaterPieces } from '../message-text.js';
import { CHAIN_STATE_CHANNEL } from '../read/chain-state.js';
import { planEveryCall } from './plans.js';

// The raw observer message log: every message is kept, in the transaction that applies it, so the index can be
// rebuilt and exported. The log is also what de-duplicates: a message whose content hash is logged (and was not
// skipped) is a re-delivery (migration 008: the unique index on content_hash covers only rows not skipped).

export interface LoggedMessage {
  receivedAt: Date;
  path: string;
  body: string;
  /** sha256 of path and body, hex */
  contentHash: string;
}

/**
 * Opens a message's transaction: logs the message and resolves whether it was new (false: a re-delivery, to
 * be skipped). The statements after these are planned per call, but for those with one plan
 * (store/write/plans.ts); the log's insert and the notification have one plan each, and go before. On
 * PostgreSQL it also notifies API processes, at commit, to drop their cached chain state
 * (read/chain-state.ts). The three statements are sent together: postgres.js pipelines them.
 */
export async function beginLoggedMessage(
  sql: TransactionSql,
  engine: Engine,
  message: LoggedMessage,
): Promise<boolean> {
  const pieces = messagePieces(message.body);
  const [[logged]] = await Promise.all([
    sql<{ id: string }[]>`
      INSERT INTO observer_messages (received_at, path, payload, content_hash)
      VALUES (${message.receivedAt}, ${message.path}, ${pieces[0]}, ${message.contentHash})
      ON CONFLICT (content_hash) WHERE NOT skipped DO NOTHING
      RETURNING id`.execute(),
    ...messageTransaction(sql, engine),
  ]);
  if (!logged) return false;
  await writeLaterPieces(sql, logged.id, pieces);
  return true;
}

/**
 * Opens the transaction that applies a message the log already holds (logged, never applied: see
 * ingest/ingestor.ts, `recoverLoggedNotIndexed`): as `beginLoggedMessage`, without the log's row.
 */
export async function resumeLoggedMessage(sql: TransactionSql, engine: Engine): Promise<void> {
  await Promise.all(messageTransaction(sql, engine));
}

/** What every message's transaction sends first, besides its log row: the notification and the plan mode. */
function messageTransaction(sql: TransactionSql, engine: Engine): Promise<unknown>[] {
  return [
    engine === 'postgres' ? sql`SELECT pg_notify(${CHAIN_STATE_CHANNEL}, '')`.execute() : Promise.resolve(),
    planEveryCall(sql),
  ];
}

/**
 * A logged message changed nothing (it does not fit the index). Kept and marked skipped, so the same message
 * delivered again once it fits is applied; if an identical message was already skipped before, this one is
 * not logged twice and counts as a duplicate.
 */
export async function markMessageSkipped(
  sql: TransactionSql,
  contentHash: string,
): Promise<'skipped' | 'duplicate'> {
  const [before] = await sql`
    SELECT 1 FROM observer_messages WHERE content_hash = ${contentHash} AND skipped LIMIT 1`;
  if (before) {
    await sql`DELETE FROM observer_messages WHERE content_hash = ${contentHash} AND NOT skipped`;
    return 'duplicate';
  }
  await sql`UPDATE observer_messages SET skipped = true WHERE content_hash = ${contentHash} AND NOT skipped`;
  return 'skipped';
}

/** The body of the logged message with this content hash (not a skipped one), if the log holds it. */
export async function loggedMessageBody(
  sql: TransactionSql,
  contentHash: string,
): Promise<string | undefined> {
  const [row] = await sql<{ id: string; payload: string; later_pieces: number }[]>`
    SELECT m.id, m.payload, ${laterPiecesColumn(sql)}
    FROM observer_messages m WHERE m.content_hash = ${contentHash} AND NOT m.skipped LIMIT 1`;
  return row && readMessageText(sql, row.id, row.payload, row.later_pieces);
}

import type { Sql } from '../db.js';
import { laterPiecesColumn, readMessageText } from '../message-text.js';

export interface LoggedMessageRow {
  id: number;
  received_at: Date;
  path: string;
  payload: string;
}

/** The raw log's messages after `afterId`, in the order they were stored, at most `limit` (for export). */
export async function readLoggedMessages(
  sql: Sql,
  afterId: number,
  limit: number,
): Promise<LoggedMessageRow[]> {
  const rows = await sql<(LoggedMessageRow & { later_pieces: number })[]>`
    SELECT m.id, m.received_at, m.path, m.payload, ${laterPiecesColumn(sql)}
    FROM observer_messages m WHERE m.id > ${afterId} ORDER BY m.id LIMIT ${limit}`;
  const messages: LoggedMessageRow[] = [];
  for (const { later_pieces, ...row } of rows) {
    messages.push({ ...row, payload: await readMessageText(sql, row.id, row.payload, later_pieces) });
  }
  return messages;
}

/**
 * The newest messages of `path` the raw log holds as applied (not skipped), newest first, at most `limit`:
 * what ingest checks at start-up (ingest/ingestor.ts, `recoverLoggedNotIndexed`). The log's primary key is read
 * backwards; a log whose tail is mostly mempool messages is read that much further.
 */
export async function newestLoggedMessages(
  sql: Sql,
  path: string,
  limit: number,
): Promise<LoggedMessageRow[]> {
  const rows = await sql<(LoggedMessageRow & { later_pieces: number })[]>`
    SELECT m.id, m.received_at, m.path, m.payload, ${laterPiecesColumn(sql)}
    FROM observer_messages m WHERE m.path = ${path} AND NOT m.skipped ORDER BY m.id DESC LIMIT ${limit}`;
  const messages: LoggedMessageRow[] = [];
  for (const { later_pieces, ...row } of rows) {
    messages.push({ ...row, payload: await readMessageText(sql, row.id, row.payload, later_pieces) });
  }
  return messages;
}

/** Which of these blocks (index block hashes) and burn blocks (burn block hashes) the index holds. */
export async function indexedBlocks(sql: Sql, blocks: string[], burnBlocks: string[]): Promise<Set<string>> {
  const rows = await sql<{ hash: string }[]>`
    SELECT index_block_hash AS hash FROM blocks WHERE index_block_hash = ANY(${blocks}::text[])
    UNION ALL
    SELECT burn_block_hash FROM burn_blocks WHERE burn_block_hash = ANY(${burnBlocks}::text[])`;
  return new Set(rows.map((r) => r.hash));
}

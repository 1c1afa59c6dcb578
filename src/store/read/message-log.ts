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

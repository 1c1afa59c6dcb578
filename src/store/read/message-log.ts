import type { Sql } from '../db.js';

export interface LoggedMessageRow {
  id: number;
  received_at: Date;
  path: string;
  payload: string;
}

/** The raw log's messages after `afterId`, in the order they were stored, at most `limit` (for export). */
export function readLoggedMessages(sql: Sql, afterId: number, limit: number): Promise<LoggedMessageRow[]> {
  return sql<LoggedMessageRow[]>`
    SELECT id, received_at, path, payload FROM observer_messages WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`;
}

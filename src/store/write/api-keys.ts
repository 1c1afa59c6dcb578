import type { Engine, Sql } from '../db.js';
import { API_KEYS_CHANNEL } from '../read/api-keys.js';

/**
 * A select-list item announcing a change of the keys to the other processes (read/api-keys.ts
 * `listenForApiKeys`), for the statement that makes it: delivered at its commit, once per row it selects.
 * PGlite has no other process.
 */
function announced(sql: Sql, engine: Engine) {
  return engine === 'postgres' ? sql`, pg_notify(${API_KEYS_CHANNEL}, '')` : sql``;
}

/** Adds a key; false when the id is already taken (the caller draws another). */
export async function insertApiKey(
  sql: Sql,
  engine: Engine,
  key: { id: string; key_hash: string; label: string },
): Promise<boolean> {
  const rows = await sql`
    WITH inserted AS (
      INSERT INTO api_keys (id, key_hash, label)
      VALUES (${key.id}, ${key.key_hash}, ${key.label})
      ON CONFLICT (id) DO NOTHING
      RETURNING id
    )
    SELECT id ${announced(sql, engine)} FROM inserted`;
  return rows.length === 1;
}

/** Revokes a key for good. Returns what happened: unknown id, already revoked, or revoked now. */
export async function revokeApiKey(
  sql: Sql,
  engine: Engine,
  id: string,
): Promise<'unknown' | 'already' | 'revoked'> {
  const rows = await sql<{ revoked_now: boolean }[]>`
    WITH target AS (SELECT id, revoked_at FROM api_keys WHERE id = ${id} FOR UPDATE),
    updated AS (
      UPDATE api_keys SET revoked_at = now()
      FROM target
      WHERE api_keys.id = target.id AND target.revoked_at IS NULL
      RETURNING api_keys.id
    )
    SELECT EXISTS (SELECT 1 FROM updated) AS revoked_now ${announced(sql, engine)} FROM target`;
  if (rows.length === 0) return 'unknown';
  return rows[0].revoked_now ? 'revoked' : 'already';
}

/** Records that a key was used (called at most once per cache period, never per request). */
export async function touchApiKey(sql: Sql, id: string): Promise<void> {
  await sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${id} AND revoked_at IS NULL`;
}

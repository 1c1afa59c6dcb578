import type { Sql } from '../db.js';

/** Adds a key; false when the id is already taken (the caller draws another). */
export async function insertApiKey(
  sql: Sql,
  key: { id: string; key_hash: string; label: string },
): Promise<boolean> {
  const rows = await sql`
    INSERT INTO api_keys (id, key_hash, label)
    VALUES (${key.id}, ${key.key_hash}, ${key.label})
    ON CONFLICT (id) DO NOTHING
    RETURNING id`;
  return rows.length === 1;
}

/** Revokes a key for good. Returns what happened: unknown id, already revoked, or revoked now. */
export async function revokeApiKey(sql: Sql, id: string): Promise<'unknown' | 'already' | 'revoked'> {
  const rows = await sql<{ revoked_now: boolean }[]>`
    WITH target AS (SELECT id, revoked_at FROM api_keys WHERE id = ${id} FOR UPDATE),
    updated AS (
      UPDATE api_keys SET revoked_at = now()
      FROM target
      WHERE api_keys.id = target.id AND target.revoked_at IS NULL
      RETURNING api_keys.id
    )
    SELECT EXISTS (SELECT 1 FROM updated) AS revoked_now FROM target`;
  if (rows.length === 0) return 'unknown';
  return rows[0].revoked_now ? 'revoked' : 'already';
}

/** Records that a key was used (called at most once per cache period, never per request). */
export async function touchApiKey(sql: Sql, id: string): Promise<void> {
  await sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${id} AND revoked_at IS NULL`;
}

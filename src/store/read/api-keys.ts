import type { Sql } from '../db.js';

/** What the API needs to verify a presented key. */
export interface ApiKeyRecord {
  id: string;
  /** lowercase hex SHA-256 of the whole key */
  key_hash: string;
  label: string;
  revoked: boolean;
}

/** What `keys list` shows: never the hash. */
export interface ApiKeyListing {
  id: string;
  label: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export async function findApiKey(sql: Sql, id: string): Promise<ApiKeyRecord | undefined> {
  const [row] = await sql<ApiKeyRecord[]>`
    SELECT id, key_hash, label, revoked_at IS NOT NULL AS revoked
    FROM api_keys
    WHERE id = ${id}`;
  return row;
}

export async function listApiKeys(sql: Sql): Promise<ApiKeyListing[]> {
  return sql<ApiKeyListing[]>`
    SELECT id, label, created_at, last_used_at, revoked_at
    FROM api_keys
    ORDER BY created_at, id`;
}

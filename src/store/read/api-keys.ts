import type { Sql } from '../db.js';
import type { Store } from '../store.js';

/** The channel a change of `api_keys` is announced on (PostgreSQL), at the commit of the change. */
export const API_KEYS_CHANNEL = 'stacks_read_api_keys';

/** What the API needs to verify a presented key. */
export interface ApiKeyRecord {
  id: string;
  /** lowercase hex SHA-256 of the whole key */
  key_hash: string;
  label: string;
}

/** What `keys list` shows: never the hash. */
export interface ApiKeyListing {
  id: string;
  label: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** Every key not revoked. */
export async function validApiKeys(sql: Sql): Promise<ApiKeyRecord[]> {
  return sql<ApiKeyRecord[]>`SELECT id, key_hash, label FROM api_keys WHERE revoked_at IS NULL`;
}

/**
 * A fingerprint of the key table that moves whenever a key is created, revoked or deleted (keys are never
 * edited otherwise): one row, so that polling it costs little whatever the number of keys.
 */
export async function apiKeysVersion(sql: Sql): Promise<string> {
  const [row] = await sql<{ version: string }[]>`
    SELECT concat_ws(' ', count(*), count(revoked_at), max(created_at), max(revoked_at)) AS version
    FROM api_keys`;
  return row.version;
}

/**
 * Calls `changed` whenever another process announces a change of the keys, and after each reconnection of
 * the listening connection (what was announced meanwhile is lost); resolves once listening, so that a read
 * of the keys made next misses nothing. PostgreSQL only: a PGlite directory has one process. Returns the
 * function that stops listening.
 */
export async function listenForApiKeys(store: Store, changed: () => void): Promise<() => Promise<void>> {
  if (store.engine !== 'postgres') return async () => {};
  let listening = false;
  const reconnected = () => {
    if (listening) changed();
    listening = true;
  };
  const { unlisten } = await store.db.sql.listen(API_KEYS_CHANNEL, changed, reconnected);
  return unlisten;
}

export async function listApiKeys(sql: Sql): Promise<ApiKeyListing[]> {
  return sql<ApiKeyListing[]>`
    SELECT id, label, created_at, last_used_at, revoked_at
    FROM api_keys
    ORDER BY created_at, id`;
}

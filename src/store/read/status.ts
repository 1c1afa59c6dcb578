import type { Sql } from '../db.js';

/** What the service status, readiness and metrics report about the indexed chain and its ingestion. */
export interface IngestStatus {
  /** Height of the canonical Stacks tip (0 before the first block). */
  block_height: number;
  block_hash: string;
  index_block_hash: string;
  /** Unconfirmed microblock built on the tip ('' and -1 when none). */
  microblock_hash: string;
  microblock_sequence: number;
  /** The highest burn block the node announced (`/new_burn_block`, or a block's burn height). */
  burn_block_height: number;
  /** The burn block holding the Stacks tip; null before the first block. */
  tip_burn_block_height: number | null;
  /**
   * When this indexer received (stored) the newest observer message, live or replayed; null if none. Not the
   * time a replayed file records: the lag is about this indexer, not about how old the chain's data is.
   */
  last_message_at: Date | null;
  /** The database's `now()` − `last_message_at`, in seconds; null if no message yet. */
  seconds_since_last_message: number | null;
}

/**
 * The chain tip, the burn block of the tip, and the time the newest observer message was stored, in one
 * statement (primary keys and the newest row of the message log: index lookups only).
 */
export async function getIngestStatus(sql: Sql): Promise<IngestStatus> {
  const [row] = await sql<IngestStatus[]>`
    SELECT t.block_height, t.block_hash, t.index_block_hash, t.microblock_hash, t.microblock_sequence,
      t.burn_block_height, b.burn_block_height AS tip_burn_block_height,
      m.stored_at AS last_message_at,
      extract(epoch FROM now() - m.stored_at)::float8 AS seconds_since_last_message
    FROM chain_tip t
    LEFT JOIN blocks b ON b.index_block_hash = t.index_block_hash
    LEFT JOIN LATERAL (SELECT stored_at FROM observer_messages ORDER BY id DESC LIMIT 1) m ON true`;
  return row;
}

/**
 * Ingest lag in blocks: burn blocks the node has announced beyond the burn block that holds our Stacks
 * tip. Null before the first Stacks block. Never negative.
 */
export function ingestLagBlocks(status: {
  burn_block_height: number;
  tip_burn_block_height: number | null;
}): number | null {
  if (status.tip_burn_block_height === null) return null;
  return Math.max(0, status.burn_block_height - status.tip_burn_block_height);
}

/** Pending (not pruned) mempool transactions. */
export async function countMempool(sql: Sql): Promise<number> {
  const [row] = await sql<
    { count: number }[]
  >`SELECT count(*)::int8 AS count FROM mempool_txs WHERE NOT pruned`;
  return row.count;
}

export interface DatabaseRole {
  /** true on a hot standby (a streaming replica). */
  in_recovery: boolean;
  /**
   * On a replica: seconds since the last transaction it replayed, or 0 when it has replayed everything it
   * received (an idle primary sends nothing, which is not lag). Null on a primary.
   */
  replay_lag_seconds: number | null;
}

export async function getDatabaseRole(sql: Sql): Promise<DatabaseRole> {
  const [row] = await sql<DatabaseRole[]>`
    SELECT pg_is_in_recovery() AS in_recovery,
      CASE
        WHEN NOT pg_is_in_recovery() THEN NULL
        WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
        ELSE COALESCE(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0)
      END::float8 AS replay_lag_seconds`;
  return row;
}

/** Versions of the applied migrations. */
export async function appliedMigrationVersions(sql: Sql): Promise<Set<number>> {
  const [{ exists }] = await sql<{ exists: boolean }[]>`
    SELECT to_regclass('schema_migrations') IS NOT NULL AS exists`;
  if (!exists) return new Set();
  const rows = await sql<{ version: number }[]>`SELECT version FROM schema_migrations`;
  return new Set(rows.map((r) => Number(r.version)));
}

import assert from 'node:assert/strict';
import type { RecordedMessage } from '../../src/protocol/tsv.js';
import type { Engine, Sql } from '../../src/store/db.js';
import { connectTestDatabase, openTestStore } from './database.js';
import { ingestMessages } from './delivery.js';

/** Every table of the index, including the raw message log. */
export const INDEX_TABLES = [
  'chain_tip',
  'observer_messages',
  'blocks',
  'burn_blocks',
  'microblocks',
  'txs',
  'events',
  'smart_contracts',
  'miner_rewards',
  'mempool_txs',
  'principal_txs',
  'principal_stats',
  'stx_balances',
  'ft_balances',
  'nft_balances',
  'chain_totals',
  'sponsor_txs',
  'nft_custody',
] as const;

/** The tables the read API answers from: the index without the raw message log. */
export const READ_TABLES = INDEX_TABLES.filter((t) => t !== 'observer_messages');

/**
 * Columns whose value is the wall-clock time a message reached the live observer (the recorded time on a
 * replay), so they differ between two live runs of the same messages: left out where runs are compared.
 * The unconfirmed microblock txs' `block_time` is such a time too, but those rows are kept.
 */
export const RECEIPT_TIME_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  chain_tip: ['mempool_updated_at'],
  microblocks: ['received_at'],
  mempool_txs: ['receipt_time'],
  observer_messages: ['id', 'received_at'],
};

/**
 * An order-independent fingerprint of each table's content: equal digests mean equal databases.
 * `omit` leaves columns out, per table (e.g. RECEIPT_TIME_COLUMNS).
 */
export async function databaseDigest(
  sql: Sql,
  tables: readonly string[] = INDEX_TABLES,
  omit: Readonly<Record<string, readonly string[]>> = {},
): Promise<Record<string, string>> {
  const digest: Record<string, string> = {};
  for (const table of tables) {
    const dropped = omit[table] ?? [];
    const [row] =
      dropped.length === 0
        ? await sql<{ rows: number; hash: string | null }[]>`
            SELECT count(*)::int AS rows, md5(string_agg(r, '|' ORDER BY r)) AS hash
            FROM (SELECT row_to_json(t)::text AS r FROM ${sql(table)} t) AS x`
        : await sql<{ rows: number; hash: string | null }[]>`
            SELECT count(*)::int AS rows, md5(string_agg(r, '|' ORDER BY r)) AS hash
            FROM (SELECT (to_jsonb(t) - ${dropped as string[]}::text[])::text AS r FROM ${sql(table)} t) AS x`;
    digest[table] = `${row.rows}:${row.hash ?? ''}`;
  }
  return digest;
}

/** The messages that took effect (not skipped), in arrival order, as `path content_hash` lines. */
export async function appliedMessageLog(sql: Sql): Promise<string[]> {
  const rows = await sql<{ path: string; content_hash: string }[]>`
    SELECT path, content_hash FROM observer_messages WHERE NOT skipped ORDER BY id`;
  return rows.map((r) => `${r.path} ${r.content_hash}`);
}

/** What a live run is compared with: the index and the applied-message log. */
export interface IndexSnapshot {
  digest: Awaited<ReturnType<typeof databaseDigest>>;
  log: Awaited<ReturnType<typeof appliedMessageLog>>;
}

/** What a database holds, as live runs are compared (receipt times left out). */
export async function indexSnapshot(sql: Sql): Promise<IndexSnapshot> {
  return {
    digest: await databaseDigest(sql, READ_TABLES, RECEIPT_TIME_COLUMNS),
    log: await appliedMessageLog(sql),
  };
}

/** The snapshot of the messages applied in order, uninterrupted, through the ingest path. */
export async function uninterruptedRun(
  messages: RecordedMessage[],
  engine: Engine = 'postgres',
): Promise<IndexSnapshot> {
  const store = await openTestStore(engine);
  try {
    await ingestMessages(store, messages);
    return await indexSnapshot(store.sql);
  } finally {
    await store.close();
  }
}

/** Where a live run's database is: a PostgreSQL URL, or a PGlite directory no process holds any more. */
export type LiveDatabase = { url: string } | { pgliteDir: string };

/** Asserts the live database holds the same index and applied messages as `expected`. */
export async function assertSameIndex(where: LiveDatabase, expected: Promise<IndexSnapshot>): Promise<void> {
  const live = 'url' in where ? await connectTestDatabase(where.url) : await connectTestDatabase('', where);
  try {
    const snapshot = await expected;
    assert.deepEqual(await databaseDigest(live.sql, READ_TABLES, RECEIPT_TIME_COLUMNS), snapshot.digest);
    assert.deepEqual(await appliedMessageLog(live.sql), snapshot.log);
  } finally {
    await live.close();
  }
}

import type { Sql } from '../../src/store/db.js';

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
] as const;

/** An order-independent fingerprint of each table's content: equal digests mean equal databases. */
export async function databaseDigest(
  sql: Sql,
  tables: readonly string[] = INDEX_TABLES,
): Promise<Record<string, string>> {
  const digest: Record<string, string> = {};
  for (const table of tables) {
    const [row] = await sql<{ rows: number; hash: string | null }[]>`
      SELECT count(*)::int AS rows, md5(string_agg(r, '|' ORDER BY r)) AS hash
      FROM (SELECT row_to_json(t)::text AS r FROM ${sql(table)} t) AS x`;
    digest[table] = `${row.rows}:${row.hash ?? ''}`;
  }
  return digest;
}

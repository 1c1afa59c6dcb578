import type { Sql } from '../db.js';
import { statement } from '../statement.js';
import { anchoredVisibleRow, blockRowsVisible } from '../visibility.js';

export interface BlockRecord {
  canonical: boolean;
  block_height: number;
  block_hash: string;
  index_block_hash: string;
  parent_block_hash: string;
  parent_index_block_hash: string;
  parent_microblock_hash: string;
  parent_microblock_sequence: number;
  block_time: number;
  burn_block_time: number;
  burn_block_hash: string;
  burn_block_height: number;
  miner_txid: string;
  tenure_height: number | null;
  signer_bitvec: string | null;
  tx_count: number;
  execution_cost_read_count: number;
  execution_cost_read_length: number;
  execution_cost_runtime: number;
  execution_cost_write_count: number;
  execution_cost_write_length: number;
}

const BLOCK_COLUMNS = [
  'canonical',
  'block_height',
  'block_hash',
  'index_block_hash',
  'parent_block_hash',
  'parent_index_block_hash',
  'parent_microblock_hash',
  'parent_microblock_sequence',
  'block_time',
  'burn_block_time',
  'burn_block_hash',
  'burn_block_height',
  'miner_txid',
  'tenure_height',
  'signer_bitvec',
  'tx_count',
  'execution_cost_read_count',
  'execution_cost_read_length',
  'execution_cost_runtime',
  'execution_cost_write_count',
  'execution_cost_write_length',
] as const satisfies readonly (keyof BlockRecord)[];

const BLOCK_COLUMN_LIST = BLOCK_COLUMNS.join(', ');

// Flat statements built once and run prepared (store/statement.ts): the column list as a postgres.js
// fragment was composed again on every call.
const latestCanonicalBlock = statement<BlockRecord, []>(`
  SELECT ${BLOCK_COLUMN_LIST} FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`);
const canonicalBlockAtHeight = statement<BlockRecord, [height: number]>(`
  SELECT ${BLOCK_COLUMN_LIST} FROM blocks WHERE canonical AND block_height = $1::integer`);
const canonicalBlockByHash = statement<BlockRecord, [hash: string]>(`
  SELECT ${BLOCK_COLUMN_LIST} FROM blocks WHERE canonical AND index_block_hash = $1::text
  UNION ALL
  SELECT ${BLOCK_COLUMN_LIST} FROM blocks WHERE canonical AND block_hash = $1::text
  LIMIT 1`);

export type BlockLocator = { latest: true } | { height: number } | { hash: string };

/** A canonical block by height, block hash or index block hash, or the highest one. */
export async function findCanonicalBlock(sql: Sql, at: BlockLocator): Promise<BlockRecord | undefined> {
  let rows: BlockRecord[];
  if ('latest' in at) rows = await latestCanonicalBlock(sql);
  else if ('height' in at) rows = await canonicalBlockAtHeight(sql, at.height);
  else rows = await canonicalBlockByHash(sql, at.hash);
  return rows[0];
}

export interface BlockWithTxs extends BlockRecord {
  /** the ids of the txs an anchored read sees in the block, newest first, as JSON array text */
  txs_json: string;
  microblocks_accepted: string[];
  microblocks_streamed: string[];
  microblock_tx_count: Record<string, number>;
}

/**
 * The block of a burn block height: the canonical one if any, else the highest (a Nakamoto burn block may
 * hold many Stacks blocks: the last one is shown). With its txs (newest first, as the block keeps their ids:
 * migration 023) and the microblocks it accepted (streamed on its parent) and those streamed on it. One flat
 * statement, built once (four round trips and their composed fragments cost more client CPU than PostgreSQL
 * spends).
 */
type BlockAtBurnHeightRow = BlockRecord & {
  txs_json: string;
  accepted: [string, number][];
  streamed: string[] | null;
};

/**
 * The text of the block-by-burn-height statement ($1: the burn block height). Its microblock lookups are
 * index-only probes of migration 027's index (test/api/block-by-burn-height.test.ts reads the plan).
 */
export const BLOCK_AT_BURN_HEIGHT = `
  SELECT ${BLOCK_COLUMNS.map((c) => `b.${c}`).join(', ')},
    CASE WHEN ${blockRowsVisible('b')} THEN b.tx_ids_json ELSE '[]' END AS txs_json,
    (SELECT coalesce(json_agg(json_build_array(m.microblock_hash, (
        SELECT count(*) FROM txs t
        -- "<> ''" lets the planner use the partial index txs_microblock_idx: without it the generic plan
        -- scanned all of txs (and was JIT-compiled on every call), 1.4 s a request on a 1M-tx chain
        WHERE t.microblock_hash = m.microblock_hash AND t.microblock_hash <> ''
          AND ${anchoredVisibleRow('t')}))
        ORDER BY m.microblock_sequence), '[]'::json)
      FROM microblocks m
      WHERE m.parent_index_block_hash = b.parent_index_block_hash AND m.microblock_canonical) AS accepted,
    ARRAY(
      SELECT m.microblock_hash FROM microblocks m
      WHERE m.parent_index_block_hash = b.index_block_hash AND m.microblock_canonical
      ORDER BY m.microblock_sequence) AS streamed
  FROM (
    SELECT * FROM blocks WHERE burn_block_height = $1::integer
    ORDER BY canonical DESC, block_height DESC LIMIT 1
  ) AS b`;
const blockAtBurnHeight = statement<BlockAtBurnHeightRow, [burnBlockHeight: number]>(BLOCK_AT_BURN_HEIGHT);

export async function findBlockByBurnHeight(
  sql: Sql,
  burnBlockHeight: number,
): Promise<BlockWithTxs | undefined> {
  const [row] = await blockAtBurnHeight(sql, burnBlockHeight);
  if (!row) return undefined;
  // the row completed in place: rest/spread of a row this wide took V8's slow path (2.3% of the API's CPU
  // in bench/profile-http.ts, small chain)
  const { accepted, streamed } = row;
  return Object.assign(row, {
    microblocks_accepted: accepted.map(([hash]) => hash),
    microblocks_streamed: streamed ?? [],
    microblock_tx_count: Object.fromEntries(accepted.map(([hash, count]) => [hash, Number(count)])),
  });
}

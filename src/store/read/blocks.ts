import type { Sql } from '../db.js';
import { statement } from '../statement.js';
import { answersByKey, batchedReads } from './batched.js';
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

export const BLOCK_COLUMNS = [
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
// fragment was composed again on every call. The statements of one block and of many are built from the same
// text: `key` is `$1::integer` or `$1::text` for one, `ANY($1::integer[])` or `ANY($1::text[])` for many.
const CANONICAL_BLOCKS = `SELECT ${BLOCK_COLUMN_LIST} FROM blocks WHERE canonical`;
/** The canonical block at a height (at most one: a unique index). */
const canonicalAtHeight = (key: string) => `${CANONICAL_BLOCKS} AND block_height = ${key}`;
/** The canonical block of an index block hash, then that of a block hash (the first is the one named). */
const canonicalByHash = (key: string) => `
  ${CANONICAL_BLOCKS} AND index_block_hash = ${key}
  UNION ALL
  ${CANONICAL_BLOCKS} AND block_hash = ${key}`;

const latestCanonicalBlock = statement<BlockRecord, []>(
  `${CANONICAL_BLOCKS} ORDER BY block_height DESC LIMIT 1`,
);
const canonicalBlockAtHeight = statement<BlockRecord, [height: number]>(canonicalAtHeight('$1::integer'));
const canonicalBlockByHash = statement<BlockRecord, [hash: string]>(`${canonicalByHash('$1::text')} LIMIT 1`);
/** The blocks of many heights and many hashes: both forms above, in one statement. */
const canonicalBlocksAt = statement<BlockRecord, [heights: number[], hashes: string[]]>(
  `${canonicalAtHeight('ANY($1::integer[])')} UNION ALL ${canonicalByHash('ANY($2::text[])')}`,
);

export type BlockLocator = { latest: true } | { height: number } | { hash: string };

/**
 * A canonical block by height, block hash or index block hash, or the highest one.
 * @internal exported for its tests
 */
export async function findCanonicalBlock(sql: Sql, at: BlockLocator): Promise<BlockRecord | undefined> {
  let rows: BlockRecord[];
  if ('latest' in at) rows = await latestCanonicalBlock(sql);
  else if ('height' in at) rows = await canonicalBlockAtHeight(sql, at.height);
  else rows = await canonicalBlockByHash(sql, at.hash);
  return rows[0];
}

/**
 * `findCanonicalBlock` for several heights and hashes at once (`latest` is not batched: it is one block, kept
 * by its ETag), in one statement: the block each names, in their order. A hash names the block of that index
 * block hash, else the one of that block hash, as `findCanonicalBlock`'s `LIMIT 1` takes the first branch's
 * row first. A row found by one key is the canonical block of every key it matches (one per height), so rows
 * are matched to asks by their columns, not by the branch that found them.
 */
async function findCanonicalBlocks(
  sql: Sql,
  at: ({ height: number } | { hash: string })[],
): Promise<(BlockRecord | undefined)[]> {
  const heights = new Set<number>();
  const hashes = new Set<string>();
  for (const a of at) {
    if ('height' in a) heights.add(a.height);
    else hashes.add(a.hash);
  }
  const byHeight = new Map<number, BlockRecord>();
  const byIndexHash = new Map<string, BlockRecord>();
  const byBlockHash = new Map<string, BlockRecord>();
  for (const b of await canonicalBlocksAt(sql, [...heights], [...hashes])) {
    byHeight.set(b.block_height, b);
    byIndexHash.set(b.index_block_hash, b);
    if (!byBlockHash.has(b.block_hash)) byBlockHash.set(b.block_hash, b);
  }
  return at.map((a) =>
    'height' in a ? byHeight.get(a.height) : (byIndexHash.get(a.hash) ?? byBlockHash.get(a.hash)),
  );
}

/** `findCanonicalBlock` as a function, for reads that may be answered together (`batchedCanonicalBlockReads`). */
type CanonicalBlockReader = (at: BlockLocator) => Promise<BlockRecord | undefined>;

/**
 * `findCanonicalBlock` for reads that arrive together (store/read/batched.ts): the heights and hashes asked for
 * within one turn are read by one statement (`findCanonicalBlocks`) instead of one statement each; a read
 * alone in its turn, and `latest`, run `findCanonicalBlock`'s own. The rows are the same
 * (test/api/batched-block-reads.test.ts compares both for every block of recorded chains).
 */
export function batchedCanonicalBlockReads(sqlOf: () => Sql): CanonicalBlockReader {
  type Ask = { height: number } | { hash: string };
  const read = batchedReads<Ask, BlockRecord | undefined>(
    () => '',
    (at) => findCanonicalBlock(sqlOf(), at),
    (asks) => findCanonicalBlocks(sqlOf(), asks),
  );
  return (at) => ('latest' in at ? findCanonicalBlock(sqlOf(), at) : read(at));
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
 * spends); with the tx counts of the accepted microblocks only when there are any (a second statement, the
 * first one wrapped).
 */
type BlockAtBurnHeightRow = BlockRecord & {
  txs_json: string;
  accepted: string[];
  streamed: string[];
};

/** Microblocks on a parent (given by the SQL text of its index block hash), canonical, by sequence. */
const canonicalMicroblocksOn = (parentIndexBlockHash: string) => `ARRAY(
      SELECT m.microblock_hash FROM microblocks m
      WHERE m.parent_index_block_hash = ${parentIndexBlockHash} AND m.microblock_canonical
      ORDER BY m.microblock_sequence)`;

/**
 * The block of a burn height (given by the SQL text of its value): the canonical one, else the highest.
 */
const blockOfBurnHeight = (burnBlockHeight: string) => `
    SELECT * FROM blocks WHERE burn_block_height = ${burnBlockHeight}
    ORDER BY canonical DESC, block_height DESC LIMIT 1`;

/** What the v1 block statements (by burn height, by hash) select of a block `b`: columns, txs, microblocks. */
const BLOCK_AT_BURN_HEIGHT_COLUMNS = `${BLOCK_COLUMNS.map((c) => `b.${c}`).join(', ')},
    CASE WHEN ${blockRowsVisible('b')} THEN b.tx_ids_json ELSE '[]' END AS txs_json,
    ${canonicalMicroblocksOn('b.parent_index_block_hash')} AS accepted,
    ${canonicalMicroblocksOn('b.index_block_hash')} AS streamed`;

/**
 * The text of the block-by-burn-height statement ($1: the burn block height). Its microblock lookups are
 * index-only probes of migration 027's index (test/api/block-by-burn-height.test.ts reads the plan). The
 * accepted microblocks' tx counts are not in it: a subquery on txs in the plan cost ~10 µs of backend CPU a
 * call even when it never ran (executor start-up and the locks of txs and its index; 1M chain, 10,000 calls:
 * 54 → 44 µs a call without it), and almost no block accepts microblocks (74 of the 1M chain's 5,002).
 * @internal exported for its tests
 */
export const BLOCK_AT_BURN_HEIGHT = `
  SELECT ${BLOCK_AT_BURN_HEIGHT_COLUMNS}
  FROM (${blockOfBurnHeight('$1::integer')}) AS b`;

/**
 * The same for many burn heights ($1: their array), one row for each that has a block: the statement above
 * for each, built from the same text.
 * @internal exported for its tests
 */
export const BLOCKS_AT_BURN_HEIGHTS = `
  SELECT ${BLOCK_AT_BURN_HEIGHT_COLUMNS}
  FROM unnest($1::integer[]) AS h(height), LATERAL (${blockOfBurnHeight('h.height')}) AS b`;
const blockAtBurnHeight = statement<BlockAtBurnHeightRow, [burnBlockHeight: number]>(BLOCK_AT_BURN_HEIGHT);
const blocksAtBurnHeights = statement<BlockAtBurnHeightRow, [burnBlockHeights: number[]]>(
  BLOCKS_AT_BURN_HEIGHTS,
);

/**
 * A block-by-burn-height statement (`blockStatement`: the single or the many form) with the tx counts of the
 * accepted microblocks (`accepted_tx_counts`, in their order): for the rare block that accepted any (74 of
 * the 1M bench chain's 5,002). One statement, so the blocks and their counts come from one snapshot (a reorg
 * cannot commit between them), and no transaction holds the pool's connection while other reads wait.
 */
const withAcceptedTxCounts = (blockStatement: string) => `
  SELECT x.*, ARRAY(
      SELECT (
          SELECT count(*) FROM txs t
          -- "<> ''" lets the planner use the partial index txs_microblock_idx: without it the generic plan
          -- scanned all of txs (and was JIT-compiled on every call), 1.4 s a request on a 1M-tx chain
          WHERE t.microblock_hash = h.microblock_hash AND t.microblock_hash <> ''
            AND ${anchoredVisibleRow('t')})
      FROM unnest(x.accepted) WITH ORDINALITY AS h(microblock_hash, position)
      ORDER BY h.position) AS accepted_tx_counts
  FROM (${blockStatement}) AS x`;

type BlockAtBurnHeightWithCountsRow = BlockAtBurnHeightRow & { accepted_tx_counts: string[] };

const blockAtBurnHeightWithCounts = statement<BlockAtBurnHeightWithCountsRow, [burnBlockHeight: number]>(
  withAcceptedTxCounts(BLOCK_AT_BURN_HEIGHT),
);
/** The same for many burn heights ($1: their array): the accepting blocks of a batch, read again together. */
const blocksAtBurnHeightsWithCounts = statement<BlockAtBurnHeightWithCountsRow, [burnBlockHeights: number[]]>(
  withAcceptedTxCounts(BLOCKS_AT_BURN_HEIGHTS),
);

/** @internal exported for its tests */
export async function findBlockByBurnHeight(
  sql: Sql,
  burnBlockHeight: number,
): Promise<BlockWithTxs | undefined> {
  const [row] = await blockAtBurnHeight(sql, burnBlockHeight);
  if (!row) return undefined;
  if (row.accepted.length === 0) return completed(row, []);
  // the block accepted microblocks: it and their counts read again by one statement
  const [withCounts] = await blockAtBurnHeightWithCounts(sql, burnBlockHeight);
  return withCounts && completed(withCounts, withCounts.accepted_tx_counts);
}

/**
 * The block of a block hash (not an index block hash), with its txs and microblocks as
 * `findBlockByBurnHeight` gives them: the canonical one, else the highest (as the original's search reads a
 * block by hash: docs/upstream.md C.17).
 */
const BLOCK_OF_HASH = `
  SELECT ${BLOCK_AT_BURN_HEIGHT_COLUMNS}
  FROM (SELECT * FROM blocks WHERE block_hash = $1::text
    ORDER BY canonical DESC, block_height DESC LIMIT 1) AS b`;
const blockOfHash = statement<BlockAtBurnHeightRow, [blockHash: string]>(BLOCK_OF_HASH);
const blockOfHashWithCounts = statement<BlockAtBurnHeightWithCountsRow, [blockHash: string]>(
  withAcceptedTxCounts(BLOCK_OF_HASH),
);

/** A block by its block hash (lower case, 0x), canonical first (see `BLOCK_OF_HASH`). */
export async function findBlockByHash(sql: Sql, blockHash: string): Promise<BlockWithTxs | undefined> {
  const [row] = await blockOfHash(sql, blockHash);
  if (!row) return undefined;
  if (row.accepted.length === 0) return completed(row, []);
  const [withCounts] = await blockOfHashWithCounts(sql, blockHash);
  return withCounts && completed(withCounts, withCounts.accepted_tx_counts);
}

/** A block-by-burn-height row completed with the tx counts of its accepted microblocks (`counts`, in order). */
function completed(row: BlockAtBurnHeightRow, counts: string[]): BlockWithTxs {
  const { accepted, streamed } = row;
  // the row completed in place: rest/spread of a row this wide took V8's slow path (2.3% of the API's CPU
  // in bench/profile-http.ts, small chain)
  return Object.assign(row, {
    microblocks_accepted: accepted,
    microblocks_streamed: streamed,
    microblock_tx_count: Object.fromEntries(accepted.map((hash, i) => [hash, Number(counts[i])])),
  });
}

/**
 * `findBlockByBurnHeight` for several burn heights at once: the block of each, in their order, read by one
 * statement (`BLOCKS_AT_BURN_HEIGHTS`); the blocks of the batch that accepted microblocks are then read again
 * with their counts, together by one statement (`findBlockByBurnHeight` reads its one block so), instead of
 * one statement each (0.02 a request in the bench's walk of the 1M chain). Asks of one height share its row.
 */
async function findBlocksByBurnHeights(
  sql: Sql,
  burnBlockHeights: number[],
): Promise<(BlockWithTxs | undefined)[]> {
  const rows = await blocksAtBurnHeights(sql, [...new Set(burnBlockHeights)]);
  const accepting = rows.filter((row) => row.accepted.length > 0).map((row) => row.burn_block_height);
  const recounted = accepting.length === 0 ? [] : await blocksAtBurnHeightsWithCounts(sql, accepting);
  const blocks = [
    ...rows.filter((row) => row.accepted.length === 0).map((row) => completed(row, [])),
    ...recounted.map((row) => completed(row, row.accepted_tx_counts)),
  ];
  const byHeight = (height: number) => String(height);
  return answersByKey(burnBlockHeights, byHeight, blocks, (block) => byHeight(block.burn_block_height));
}

/**
 * `findBlockByBurnHeight` for reads that arrive together (store/read/batched.ts): the burn heights asked for
 * within one turn are read by one statement (`findBlocksByBurnHeights`), a read alone in its turn by its own.
 * Per request, one statement of 16 heights cost ~20 µs of client and ~20 µs of backend CPU against ~45 and
 * ~40 for one statement each (1M chain, 10,000 reads, scratch script). The blocks are the same
 * (test/api/batched-burn-height-reads.test.ts compares both for every burn height of recorded chains).
 */
export function batchedBlockByBurnHeightReads(
  sqlOf: () => Sql,
): (burnBlockHeight: number) => Promise<BlockWithTxs | undefined> {
  return batchedReads<number, BlockWithTxs | undefined>(
    () => '',
    (height) => findBlockByBurnHeight(sqlOf(), height),
    (heights) => findBlocksByBurnHeights(sqlOf(), heights),
  );
}

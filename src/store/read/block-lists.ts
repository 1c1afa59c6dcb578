import type { Sql } from '../db.js';
import { statement } from '../statement.js';
import { canonicalRow } from '../visibility.js';
import { BLOCK_COLUMNS, findCanonicalBlock, type BlockLocator, type BlockRecord } from './blocks.js';
import { minedRecordOf, minedRowColumns, type MinedTxRecord } from './txs.js';

// The block lists (docs/upstream.md C.1-C.5): canonical blocks newest first, a block's transactions, and the
// burn blocks the canonical Stacks blocks were mined in. Canonical heights are contiguous (each canonical
// block's parent is canonical) from the chain's first block to the tip, so a page of blocks is a range of
// heights; the chain's totals at the tip (migration 033) give the block count and number the burn blocks.

const blockColumns = (alias: string) => BLOCK_COLUMNS.map((c) => `${alias}.${c}`).join(', ');

/** The tip's height and chain totals (none before the first block). */
const TIP = `SELECT t.block_height AS tip_height, c.blocks, c.burn_blocks
  FROM chain_tip t JOIN chain_totals c ON c.index_block_hash = t.index_block_hash`;

export interface BlockPage {
  /** false when a cursor was given that names no canonical block */
  cursorFound: boolean;
  /** the number of canonical blocks; 0 on an empty page */
  total: number;
  blocks: BlockRecord[];
  /** the index block hash of the block `limit` above the page's first, when there is one */
  nextCursor: string | null;
  /** the index block hash of the block `limit` below the page's first, when there is one */
  prevCursor: string | null;
}

type BlockPageRow = Partial<BlockRecord> & {
  cursor_found: boolean;
  blocks: number | null;
  next_cursor: string | null;
  prev_cursor: string | null;
};

/**
 * $1 the cursor (an index block hash, or null for the tip), $2 the offset (below the cursor; negative: above),
 * $3 the limit. The page's first block is `offset` below the cursor block; the page is the `limit` heights
 * from there down, the cursors the blocks `limit` above and below it: each a seek of the canonical height
 * index. One row with the counts when the page is empty.
 */
const blockPage = statement<BlockPageRow, [cursor: string | null, offset: number, limit: number]>(`
  WITH tip AS (${TIP}),
  page AS (
    SELECT tip.tip_height, tip.blocks, tip.tip_height - tip.blocks + 1 AS root_height,
      c.block_height IS NOT NULL OR $1::text IS NULL AS cursor_found,
      coalesce(c.block_height, CASE WHEN $1::text IS NULL THEN tip.tip_height END) - $2::integer AS first
    FROM tip
    LEFT JOIN blocks c ON c.index_block_hash = $1::text AND c.canonical
  ),
  placed AS (
    SELECT p.*, p.first BETWEEN p.root_height AND p.tip_height AS inside FROM page p
  )
  SELECT p.cursor_found, CASE WHEN p.inside THEN p.blocks END AS blocks,
    (SELECT n.index_block_hash FROM blocks n
      WHERE p.inside AND n.canonical AND n.block_height = p.first + $3::integer) AS next_cursor,
    (SELECT n.index_block_hash FROM blocks n
      WHERE p.inside AND n.canonical AND n.block_height = p.first - $3::integer
        AND p.first - $3::integer >= p.root_height) AS prev_cursor,
    b.*
  FROM placed p
  LEFT JOIN LATERAL (
    SELECT ${blockColumns('b')} FROM blocks b
    WHERE p.inside AND b.canonical AND b.block_height <= p.first AND b.block_height > p.first - $3::integer
    ORDER BY b.block_height DESC
  ) AS b ON true
  ORDER BY b.block_height DESC`);

/**
 * A page of canonical blocks, newest first, starting `offset` blocks below the cursor block (the tip when
 * there is none; a negative offset moves up), with the cursors of the pages `limit` above and below
 * (docs/upstream.md C.1). One statement.
 */
export async function listBlocks(
  sql: Sql,
  page: { limit: number; offset: number; cursor: string | null },
): Promise<BlockPage> {
  const rows = await blockPage(sql, page.cursor, page.offset, page.limit);
  const first = rows[0];
  const blocks = rows.filter((r) => r.index_block_hash != null).map((r) => blockOf(r));
  return {
    cursorFound: first?.cursor_found ?? page.cursor === null,
    total: blocks.length > 0 ? Number(first.blocks) : 0,
    blocks,
    nextCursor: blocks.length > 0 ? first.next_cursor : null,
    prevCursor: blocks.length > 0 ? first.prev_cursor : null,
  };
}

/** The block columns of a row that carries others. */
function blockOf(row: Partial<BlockRecord>): BlockRecord {
  const block: Record<string, unknown> = {};
  for (const column of BLOCK_COLUMNS) block[column] = row[column];
  return block as unknown as BlockRecord;
}

export interface BlockTxPage {
  /** the canonical block named, if any */
  block: BlockRecord | undefined;
  /** the block's `tx_count` (the transactions its message carried, not the rows shown) */
  total: number;
  /** the page of its canonical txs, without events */
  txs: MinedTxRecord[];
}

/** $1 the index block hash, $2 the limit, $3 the offset. */
const blockTxs = statement<
  Omit<MinedTxRecord, 'events'>,
  [indexBlockHash: string, limit: number, offset: number]
>(`
  SELECT ${minedRowColumns('t')} FROM txs t
  WHERE t.index_block_hash = $1 AND ${canonicalRow('t')}
  ORDER BY t.microblock_sequence, t.tx_index, t.tx_id
  LIMIT $2 OFFSET $3`);

/**
 * A page of a canonical block's txs (docs/upstream.md C.2): its confirmed microblock txs by sequence, then its
 * own, by tx index (genesis txs adopted into block 1 tie with its own: then by id). An index range of the
 * block's txs; the offset is bounded by the block's size.
 */
export async function listBlockTxs(
  sql: Sql,
  at: BlockLocator,
  page: { limit: number; offset: number },
): Promise<BlockTxPage> {
  const block = await findCanonicalBlock(sql, at);
  if (!block) return { block, total: 0, txs: [] };
  const rows = await blockTxs(sql, block.index_block_hash, page.limit, page.offset);
  return { block, total: block.tx_count, txs: rows.map((row) => minedRecordOf(row)) };
}

/** A burn block as the canonical Stacks blocks mined in it show it (docs/upstream.md C.3). */
export interface BurnBlockRecord {
  burn_block_height: number;
  /** the burn block hash and time the highest of its Stacks blocks carries */
  burn_block_hash: string;
  burn_block_time: number;
  /** the block hashes of its canonical Stacks blocks, highest first */
  stacks_blocks: string[];
  /** the mean gap in block time between its consecutive Stacks blocks; null when it holds one */
  avg_block_time: number | null;
  /** the sum of its Stacks blocks' `tx_count` */
  total_tx_count: number;
}

interface StacksBlockRow {
  burn_block_height: number;
  burn_block_hash: string;
  burn_block_time: number;
  block_hash: string;
  block_height: number;
  block_time: number;
  tx_count: number;
}

const STACKS_BLOCK_COLUMNS = (alias: string) =>
  [
    'burn_block_height',
    'burn_block_hash',
    'burn_block_time',
    'block_hash',
    'block_height',
    'block_time',
    'tx_count',
  ]
    .map((c) => `${alias}.${c}`)
    .join(', ');

/** Canonical Stacks blocks grouped by burn height, highest first (each group's blocks highest first). */
function burnBlocksOf(rows: StacksBlockRow[]): BurnBlockRecord[] {
  const groups = new Map<number, StacksBlockRow[]>();
  for (const row of rows) {
    const group = groups.get(row.burn_block_height);
    if (group) group.push(row);
    else groups.set(row.burn_block_height, [row]);
  }
  return [...groups.values()]
    .map((blocks) => {
      blocks.sort((a, b) => b.block_height - a.block_height);
      const [highest] = blocks;
      const lowest = blocks[blocks.length - 1];
      return {
        burn_block_height: highest.burn_block_height,
        burn_block_hash: highest.burn_block_hash,
        burn_block_time: Number(highest.burn_block_time),
        stacks_blocks: blocks.map((b) => b.block_hash),
        // the consecutive gaps' mean: the first to the last, over the gaps
        avg_block_time:
          blocks.length > 1
            ? (Number(highest.block_time) - Number(lowest.block_time)) / (blocks.length - 1)
            : null,
        total_tx_count: blocks.reduce((sum, b) => sum + b.tx_count, 0),
      };
    })
    .sort((a, b) => b.burn_block_height - a.burn_block_height);
}

export interface BurnBlockPage {
  /** the number of canonical Stacks blocks (not of burn blocks, as the original counts); 0 on an empty page */
  total: number;
  burnBlocks: BurnBlockRecord[];
}

/**
 * Where the chain's burn blocks are numbered. Every canonical block but the chain's first counts the distinct
 * burn heights up to its own (chain_totals.burn_blocks, 1 up); the first block, when no indexed parent
 * checked its burn height (`burn_blocks` 0), may sit anywhere among them: in the group of a later block of
 * its burn height (`joins`), else alone, above the `below` groups of lower burn height.
 */
interface BurnNumbering {
  tip_height: number;
  blocks: number;
  /** the groups of the blocks above the first */
  burn_blocks: number;
  root_height: number;
  /** the first block's own number: 0 when unchecked */
  root_burn_blocks: number;
  joins: number | null;
  below: number | null;
}

const burnNumbering = statement<BurnNumbering, []>(`
  WITH tip AS (${TIP})
  SELECT tip.*, r.block_height AS root_height, rc.burn_blocks AS root_burn_blocks,
    (SELECT x.burn_blocks FROM blocks b JOIN chain_totals x ON x.index_block_hash = b.index_block_hash
      WHERE b.burn_block_height = r.burn_block_height AND b.canonical AND b.block_height > r.block_height
      LIMIT 1) AS joins,
    (SELECT x.burn_blocks FROM blocks b JOIN chain_totals x ON x.index_block_hash = b.index_block_hash
      WHERE b.burn_block_height < r.burn_block_height AND b.canonical AND b.block_height > r.block_height
      ORDER BY b.burn_block_height DESC LIMIT 1) AS below
  FROM tip
  JOIN blocks r ON r.canonical AND r.block_height = tip.tip_height - tip.blocks + 1
  JOIN chain_totals rc ON rc.index_block_hash = r.index_block_hash`);

/** $1, $2 the range of burn block numbers; $3 the first block's height when it joins the page, else null. */
const stacksBlocksOfBurnBlocks = statement<StacksBlockRow, [from: number, to: number, root: number | null]>(`
  SELECT ${STACKS_BLOCK_COLUMNS('b')} FROM chain_totals c JOIN blocks b ON b.index_block_hash = c.index_block_hash
  WHERE c.burn_blocks BETWEEN $1 AND $2 AND b.canonical
  UNION ALL
  SELECT ${STACKS_BLOCK_COLUMNS('b')} FROM blocks b WHERE b.canonical AND b.block_height = $3`);

/**
 * A page of burn blocks, highest first (docs/upstream.md C.3): the burn heights of the canonical Stacks
 * blocks, each with its blocks. The page's burn blocks are a range of the numbers the chain's totals give
 * (one index range), whatever the offset.
 */
export async function listBurnBlocks(
  sql: Sql,
  page: { limit: number; offset: number },
): Promise<BurnBlockPage> {
  const [n] = await burnNumbering(sql);
  if (!n || page.limit <= 0) return { total: 0, burnBlocks: [] };
  // the first block alone: its group sits above the `below` groups (k), numbered k + 1 among all
  const alone = n.root_burn_blocks === 0 && n.joins === null;
  const k = n.below ?? 0;
  const groups = n.burn_blocks + (alone ? 1 : 0);
  // the page, as group numbers from the lowest burn height (1) up
  const high = groups - page.offset;
  const low = Math.max(1, high - page.limit + 1);
  if (high < 1 || low > high) return { total: 0, burnBlocks: [] };
  let from = low;
  let to = high;
  let withRoot = false;
  if (alone) {
    withRoot = low <= k + 1 && k + 1 <= high;
    from = low <= k ? low : Math.max(low - 1, k + 1);
    to = high <= k ? high : high - 1;
  } else if (n.root_burn_blocks === 0) {
    withRoot = n.joins! >= low && n.joins! <= high;
  }
  const rows = await stacksBlocksOfBurnBlocks(sql, from, to, withRoot ? n.root_height : null);
  const burnBlocks = burnBlocksOf(rows);
  return { total: burnBlocks.length > 0 ? n.blocks : 0, burnBlocks };
}

/** A burn block as named by the API: the latest one, a burn height or a burn block hash. */
export type BurnBlockLocator = { latest: true } | { height: number } | { hash: string };

/** The canonical Stacks blocks of a burn block: $1 a burn height, or $2 a burn block hash, or both null (latest). */
const stacksBlocksOfBurnBlock = (rows: string) => `
  SELECT ${STACKS_BLOCK_COLUMNS('b')} FROM blocks b
  WHERE b.canonical AND ${rows}`;
const BURN_BLOCK_WHERE = {
  latest: `b.burn_block_hash = (SELECT l.burn_block_hash FROM blocks l WHERE l.canonical
    ORDER BY l.block_height DESC LIMIT 1)`,
  height: 'b.burn_block_height = $1::integer',
  hash: 'b.burn_block_hash = $1::text',
};
const burnBlockLatest = statement<StacksBlockRow, []>(stacksBlocksOfBurnBlock(BURN_BLOCK_WHERE.latest));
const burnBlockAtHeight = statement<StacksBlockRow, [height: number]>(
  stacksBlocksOfBurnBlock(BURN_BLOCK_WHERE.height),
);
const burnBlockByHash = statement<StacksBlockRow, [hash: string]>(
  stacksBlocksOfBurnBlock(BURN_BLOCK_WHERE.hash),
);

/**
 * One burn block (docs/upstream.md C.4): `latest` is that of the highest canonical block; a height takes every
 * canonical block of that burn height, a hash those of that burn block hash (as given). Undefined when none.
 */
export async function findBurnBlock(sql: Sql, at: BurnBlockLocator): Promise<BurnBlockRecord | undefined> {
  const rows =
    'latest' in at
      ? await burnBlockLatest(sql)
      : 'height' in at
        ? await burnBlockAtHeight(sql, at.height)
        : await burnBlockByHash(sql, at.hash);
  return burnBlocksOf(rows)[0];
}

export interface BurnBlockBlocksPage {
  /** whether any block, canonical or not, was mined in that burn block */
  found: boolean;
  /** how many canonical blocks were; 0 on an empty page */
  total: number;
  blocks: BlockRecord[];
}

type BurnBlockBlocksRow = Partial<BlockRecord> & { found: boolean; total: string };

/** The page of a burn block's canonical blocks (`where` on blocks `b`; `$n` the limit and `$n+1` the offset). */
const burnBlockBlocks = (where: string, limit: string, offset: string) => `
  SELECT EXISTS (SELECT FROM blocks b WHERE ${where}) AS found,
    (SELECT count(*) FROM blocks b WHERE ${where} AND b.canonical) AS total, p.*
  FROM (SELECT 1) AS one
  LEFT JOIN LATERAL (
    SELECT ${blockColumns('b')} FROM blocks b WHERE ${where} AND b.canonical
    ORDER BY b.block_height DESC LIMIT ${limit} OFFSET ${offset}
  ) AS p ON true`;
const burnBlockBlocksLatest = statement<BurnBlockBlocksRow, [limit: number, offset: number]>(
  burnBlockBlocks(BURN_BLOCK_WHERE.latest, '$1', '$2'),
);
const burnBlockBlocksAtHeight = statement<
  BurnBlockBlocksRow,
  [height: number, limit: number, offset: number]
>(burnBlockBlocks(BURN_BLOCK_WHERE.height, '$2', '$3'));
const burnBlockBlocksByHash = statement<BurnBlockBlocksRow, [hash: string, limit: number, offset: number]>(
  burnBlockBlocks(BURN_BLOCK_WHERE.hash, '$2', '$3'),
);

/**
 * A page of the canonical Stacks blocks of a burn block, highest first (docs/upstream.md C.5), and whether
 * any block at all (orphaned ones too) was mined in it. The offset is bounded by the blocks of one burn block.
 */
export async function listBurnBlockBlocks(
  sql: Sql,
  at: BurnBlockLocator,
  page: { limit: number; offset: number },
): Promise<BurnBlockBlocksPage> {
  const rows =
    'latest' in at
      ? await burnBlockBlocksLatest(sql, page.limit, page.offset)
      : 'height' in at
        ? await burnBlockBlocksAtHeight(sql, at.height, page.limit, page.offset)
        : await burnBlockBlocksByHash(sql, at.hash, page.limit, page.offset);
  const blocks = rows.filter((r) => r.index_block_hash != null).map((r) => blockOf(r));
  return { found: rows[0].found, total: blocks.length > 0 ? Number(rows[0].total) : 0, blocks };
}

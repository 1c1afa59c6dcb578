import type { TransactionSql } from '../db.js';
import type { BlockRow } from '../schema/rows.js';
import { TX_TYPES } from '../schema/codes.js';
import { PREPARED } from '../statement.js';
import { chainTotalsColumns, txTypeTotalsColumn } from '../schema/tables.js';

// A block's chain totals (migration 033): its parent's plus what the block itself holds, written once when
// the block is stored. From the rows in hand (`insertChainTotals`), or from the rows stored under it when
// those are not the rows in hand (a payload repeating a tx, block 0's rows adopted by block 1:
// `storeChainTotals`); test/ingest/block-paths.test.ts proves the two equal.

/** The totals a block adds to its parent's (all but its key, place and `burn_blocks`), in column order. */
const OWN_COLUMNS = Object.keys(chainTotalsColumns).filter(
  (name) => !['index_block_hash', 'block_height', 'burn_block_height', 'burn_blocks'].includes(name),
);
/** The column of each transaction type's count. */
const TYPE_COLUMNS = new Map([...TX_TYPES.keys()].map((name) => [name, txTypeTotalsColumn(name)]));
for (const column of TYPE_COLUMNS.values()) {
  if (!OWN_COLUMNS.includes(column)) throw new Error(`chain_totals has no column ${column}`);
}

type OwnTotals = Record<string, number>;
const COLUMN_OF_TYPE_ID = new Map(
  [...TX_TYPES].flatMap(([name, ids]) => ids.map((id) => [id, TYPE_COLUMNS.get(name)!] as const)),
);

/**
 * The statement adding a block's own totals (`own`: a select of one row with the block's index block hash,
 * parent, height, burn height and `OWN_COLUMNS`) to its parent's. A block whose parent is not
 * indexed starts a chain: it counts from zero, and its burn height, never checked against a parent, is not
 * counted as a burn block (`burn_blocks` 0); a block above it counts a burn block each time the burn height
 * rises, and its first child counts one. Written again when stored again (the totals read back).
 */
const addToParent = (own: string) => `
  INSERT INTO chain_totals AS c (index_block_hash, block_height, burn_block_height,
    ${OWN_COLUMNS.join(', ')}, burn_blocks)
  SELECT n.index_block_hash, n.block_height, n.burn_block_height,
    ${OWN_COLUMNS.map((name) => `coalesce(p.${name}, 0) + n.${name}`).join(', ')},
    CASE WHEN p.index_block_hash IS NULL THEN 0
      WHEN p.burn_blocks = 0 OR n.burn_block_height > p.burn_block_height THEN p.burn_blocks + 1
      ELSE p.burn_blocks END
  FROM (${own}) AS n
  LEFT JOIN chain_totals p ON p.index_block_hash = n.parent_index_block_hash
  ON CONFLICT (index_block_hash) DO UPDATE SET
    ${[...OWN_COLUMNS, 'burn_blocks'].map((name) => `${name} = excluded.${name}`).join(', ')}`;

const BLOCK_PARAMETERS = `$1::text AS index_block_hash, $2::text AS parent_index_block_hash,
  $3::integer AS block_height, $4::integer AS burn_block_height`;

const IN_HAND = addToParent(
  `SELECT ${BLOCK_PARAMETERS}, ${OWN_COLUMNS.map((name, i) => `$${i + 5}::bigint AS ${name}`).join(', ')}`,
);

/** Counts of a block's stored rows, from txs `t` (a genesis block 0 counts none: its rows move to block 1). */
const STORED = addToParent(`
  SELECT b.index_block_hash, b.parent_index_block_hash, b.block_height, b.burn_block_height,
    CASE WHEN b.block_height = 0 THEN 0 ELSE 1 END AS blocks,
    CASE WHEN b.block_height = 0 THEN 0 ELSE b.tx_count END AS tx_count,
    r.*
  FROM blocks b
  CROSS JOIN LATERAL (
    SELECT count(*) AS tx_rows,
      ${[...TX_TYPES]
        .map(
          ([name, ids]) =>
            `count(*) FILTER (WHERE t.type_id IN (${ids.join(', ')})) AS ${TYPE_COLUMNS.get(name)}`,
        )
        .join(',\n      ')}
    FROM txs t WHERE t.index_block_hash = b.index_block_hash AND b.block_height <> 0
  ) AS r
  WHERE b.index_block_hash = $1`);

/** A block's own totals from its rows in hand (all of them: the block's rows are new and distinct). */
function ownTotals(block: BlockRow, txs: readonly { type_id: number }[]): OwnTotals {
  const own: OwnTotals = Object.fromEntries(OWN_COLUMNS.map((name) => [name, 0]));
  if (block.block_height === 0) return own;
  own.blocks = 1;
  own.tx_count = block.tx_count;
  own.tx_rows = txs.length;
  for (const tx of txs) {
    const column = COLUMN_OF_TYPE_ID.get(tx.type_id);
    if (column !== undefined) own[column]++;
  }
  return own;
}

/** Stores a new block's totals, its own counted from `txs`, its rows in hand. Sent at once. */
export function insertChainTotals(
  sql: TransactionSql,
  block: BlockRow,
  txs: readonly { type_id: number }[],
): Promise<unknown> {
  const own = ownTotals(block, txs);
  return sql
    .unsafe(
      IN_HAND,
      [
        block.index_block_hash,
        block.parent_index_block_hash,
        block.block_height,
        block.burn_block_height,
        ...OWN_COLUMNS.map((name) => own[name]),
      ],
      PREPARED,
    )
    .execute();
}

/** Stores (again) a block's totals, its own counted from its stored rows. */
export function storeChainTotals(sql: TransactionSql, indexBlockHash: string): Promise<unknown> {
  return sql.unsafe(STORED, [indexBlockHash], PREPARED).execute();
}

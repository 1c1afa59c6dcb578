// The one place that decides which mined rows a reader sees; every statement that filters on it (reads, and
// the writes that ask whether a tx is mined) takes its text from here (test/store/visibility-rule.test.ts
// fails on the rule written anywhere else). A row of `txs`, `events`, `principal_txs`, `smart_contracts` is
// visible when it is on the canonical chain and, if it came in a microblock, that microblock is on the
// canonical stream. Unconfirmed microblock rows (index_block_hash = '', stored at height tip+1) are visible
// only to `unanchored` reads; `until_block` caps the height.
//
// The rule is SQL text, for statements whose text is built once at start-up and run prepared
// (store/statement.ts: composing fragments per call cost ~100 µs of client CPU).

export interface Visibility {
  /** include txs of microblocks not yet confirmed by an anchored block */
  unanchored: boolean;
  /** only rows mined at or below this height */
  maxHeight?: number;
}

const column = (alias: string, name: string) => (alias === '' ? name : `${alias}.${name}`);

/** On the canonical chain and, if mined in a microblock, on the canonical microblock stream. */
export function canonicalRow(alias: string): string {
  return `${column(alias, 'canonical')} AND ${column(alias, 'microblock_canonical')}`;
}

/** Rows of microblocks no block has confirmed yet carry index_block_hash ''. */
export function unconfirmedRow(alias: string): string {
  return `${column(alias, 'index_block_hash')} = ''`;
}

/** Visible to an anchored read: canonical and confirmed by a block. */
export function anchoredVisibleRow(alias: string): string {
  return `${canonicalRow(alias)} AND ${column(alias, 'index_block_hash')} <> ''`;
}

/**
 * Whether an anchored read sees the rows mined in a block (the block given by its alias): all of them when
 * the block is canonical, none otherwise. A block's rows carry its `canonical` flag (write/blocks.ts
 * setBlocksCanonical flips both; write/genesis.ts sets both) and are on the canonical microblock stream (only
 * unconfirmed rows are ever orphaned: write/microblocks.ts). For what a block keeps about its rows (its
 * tx-id list, migration 023); test/api/block-by-burn-height.test.ts checks it against `anchoredVisibleRow`.
 */
export function blockRowsVisible(blockAlias: string): string {
  return column(blockAlias, 'canonical');
}

/**
 * Visible, `unanchored` given by the SQL text of a boolean (a parameter such as `$2`): one statement text
 * serves both kinds of read.
 */
export function visibleRow(alias: string, unanchored: string): string {
  return `${canonicalRow(alias)} AND (${column(alias, 'index_block_hash')} <> '' OR ${unanchored}::boolean)`;
}

/**
 * Only the rows of the unconfirmed microblock stream on the tip (no block yet, stored at tip+1): what an
 * `unanchored` read adds to the running totals of the anchored chain.
 */
export function unconfirmedStreamRow(alias: string): string {
  return `${canonicalRow(alias)} AND ${unconfirmedRow(alias)} AND ${column(alias, 'block_height')} > (SELECT block_height FROM chain_tip)`;
}

/**
 * A pending mempool row (not pruned), in a read of one payer's rows (`sender_address` or `sponsor_address` =
 * ...): `IS FALSE` (the column is NOT NULL, so the same rows as `NOT pruned`) is a key condition of the payer
 * indexes of migration 038, keyed (payer, pruned, nonce), and proves none of the partial `NOT pruned` indexes. So
 * even a generic plan reads the payer's pending range: costed on those partial indexes, whose pages pruned entries
 * swell, it once walked the busiest sender's every mempool entry (F-read-busiest-nonces-unstable).
 */
export function pendingPayerRow(alias: string): string {
  return `${column(alias, 'pruned')} IS FALSE`;
}

import type { Sql } from '../db.js';

// The one place that decides which mined rows a reader sees. A row of `txs`, `events`, `principal_txs`,
// `smart_contracts` is visible when it is on the canonical chain and, if it came in a microblock, that
// microblock is on the canonical stream. Unconfirmed microblock rows (index_block_hash = '', stored at
// height tip+1) are visible only to `unanchored` reads; `until_block` caps the height.
// Some hot statements inline this rule instead of composing `visible()` (fragments cost client CPU per call):
// `findMinedTx` and `findMinedTxs` in txs.ts, `findContractDeployments` in contracts.ts. Change them there too.

export interface Visibility {
  /** include txs of microblocks not yet confirmed by an anchored block */
  unanchored: boolean;
  /** only rows mined at or below this height */
  maxHeight?: number;
}

/** SQL condition on a row alias (`t`, `e`, `p`...) for the given visibility. */
export function visible(sql: Sql, alias: string, v: Visibility) {
  const col = (name: string) => sql(`${alias}.${name}`);
  const base = sql`${col('canonical')} AND ${col('microblock_canonical')}`;
  const anchored = v.unanchored ? sql`` : sql` AND ${col('index_block_hash')} <> ''`;
  const capped = v.maxHeight === undefined ? sql`` : sql` AND ${col('block_height')} <= ${v.maxHeight}`;
  return sql`${base}${anchored}${capped}`;
}

/**
 * SQL condition selecting only the rows of the unconfirmed microblock stream on the tip (no block yet,
 * stored at tip+1): what an `unanchored` read adds to the running totals of the anchored chain.
 */
export function unconfirmedOnly(sql: Sql, alias: string) {
  const col = (name: string) => sql(`${alias}.${name}`);
  return sql`${col('canonical')} AND ${col('microblock_canonical')} AND ${col('index_block_hash')} = ''
    AND ${col('block_height')} > (SELECT block_height FROM chain_tip)`;
}

import { NotFoundError } from '../../errors.js';
import type { Sql } from '../db.js';

// The height an account read looks at (docs/upstream.md A.0): the tip, the tip plus the unconfirmed
// microblock stream (stored at tip+1), or the height of an `until_block`. Rows of the canonical chain mined
// at or below that height are what the read sees; unconfirmed microblock rows count once it is above the tip.

export interface AccountScope {
  /** chain tip height when the read started */
  tip: number;
  /** effective height H */
  height: number;
}

export type ScopeRequest =
  | { unanchored: boolean }
  | { untilHeight: number }
  /** a block hash or index block hash, lowercase 0x-hex */
  | { untilHash: string };

/** The rows an account read sees at a scope. */
export type ScopeWindow =
  /** the running totals of the anchored chain, plus the unconfirmed microblock rows when `unconfirmed` */
  | { current: true; unconfirmed: boolean }
  /** an aggregate over the anchored rows up to `maxHeight` (a height below the tip) */
  | { current: false; maxHeight: number };

export function scopeWindow(scope: AccountScope): ScopeWindow {
  if (scope.height >= scope.tip) return { current: true, unconfirmed: scope.height > scope.tip };
  return { current: false, maxHeight: scope.height };
}

/**
 * Resolves the effective height at chain tip `tip` (the height of the chain state the answer is tagged
 * with); an `until_block` hash that names no block is a NotFoundError.
 */
export async function resolveScope(sql: Sql, request: ScopeRequest, tip: number): Promise<AccountScope> {
  if ('unanchored' in request) return { tip, height: request.unanchored ? tip + 1 : tip };
  if ('untilHeight' in request) return { tip, height: request.untilHeight };
  // A hash may name an orphaned block: the read then covers the canonical chain up to that block's height.
  const [block] = await sql<{ block_height: number }[]>`
    SELECT block_height FROM (
      SELECT block_height, canonical FROM blocks WHERE block_hash = ${request.untilHash}
      UNION ALL
      SELECT block_height, canonical FROM blocks WHERE index_block_hash = ${request.untilHash}
    ) AS b
    ORDER BY canonical DESC, block_height DESC LIMIT 1`;
  if (!block) throw new NotFoundError('block not found with hash');
  return { tip, height: block.block_height };
}

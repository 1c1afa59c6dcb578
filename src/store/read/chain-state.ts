import type { Sql } from '../db.js';

export interface ChainState {
  block_height: number;
  index_block_hash: string;
  block_hash: string;
  burn_block_height: number;
  microblock_hash: string;
  microblock_sequence: number;
  mempool_version: number;
  /** `extract(epoch from mempool_updated_at)` as text: the mempool ETag */
  mempool_updated_at: string;
}

/** The chain tip and the mempool version: what ETags and `unanchored` reads key on. */
export async function getChainState(sql: Sql): Promise<ChainState> {
  const [state] = await sql<ChainState[]>`
    SELECT block_height, index_block_hash, block_hash, burn_block_height, microblock_hash, microblock_sequence,
      mempool_version, extract(epoch FROM mempool_updated_at)::text AS mempool_updated_at
    FROM chain_tip`;
  return state;
}

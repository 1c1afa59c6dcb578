import type { TransactionSql } from '../db.js';
import type { ChainTip } from '../schema/rows.js';
import { chainTipColumns } from '../schema/tables.js';
import { statement } from '../statement.js';

const lockTipRow = statement<ChainTip, []>(
  `SELECT ${Object.keys(chainTipColumns).join(', ')} FROM chain_tip FOR UPDATE`,
);

/** The tip row, locked for the rest of the transaction: ingest is single-writer. */
export async function lockChainTip(sql: TransactionSql): Promise<ChainTip> {
  const [tip] = await lockTipRow(sql);
  return tip;
}

export function setChainTipBlock(
  sql: TransactionSql,
  block: { block_height: number; index_block_hash: string; block_hash: string; burn_block_height: number },
  poxUnlockHeights: (number | null | undefined)[],
): Promise<unknown> {
  const [v1, v2, v3, v4] = poxUnlockHeights.map((h) => h ?? null);
  return sql`
    UPDATE chain_tip SET
      block_height = ${block.block_height},
      index_block_hash = ${block.index_block_hash},
      block_hash = ${block.block_hash},
      burn_block_height = GREATEST(burn_block_height, ${block.burn_block_height}),
      microblock_hash = '',
      microblock_sequence = -1,
      pox_v1_unlock_height = COALESCE(${v1}, pox_v1_unlock_height),
      pox_v2_unlock_height = COALESCE(${v2}, pox_v2_unlock_height),
      pox_v3_unlock_height = COALESCE(${v3}, pox_v3_unlock_height),
      pox_v4_unlock_height = COALESCE(${v4}, pox_v4_unlock_height)`.execute();
}

export async function setChainTipMicroblock(
  sql: TransactionSql,
  hash: string,
  sequence: number,
): Promise<void> {
  await sql`UPDATE chain_tip SET microblock_hash = ${hash}, microblock_sequence = ${sequence}`;
}

export function raiseBurnTip(sql: TransactionSql, burnBlockHeight: number): Promise<unknown> {
  return sql`UPDATE chain_tip SET burn_block_height = GREATEST(burn_block_height, ${burnBlockHeight})`.execute();
}

/** Marks the mempool as changed: caches and ETags keyed on it are invalidated. */
export function touchMempool(sql: TransactionSql, at: Date): Promise<unknown> {
  return sql`UPDATE chain_tip SET mempool_version = mempool_version + 1, mempool_updated_at = ${at}`.execute();
}

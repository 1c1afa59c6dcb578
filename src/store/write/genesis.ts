import type { TransactionSql } from '../db.js';
import { storeBlockTxIds } from './blocks.js';

/**
 * Networks that start with a block 0 (newer mainnet) put the boot contracts and genesis STX mints there.
 * Block 0 is never canonical; when block 1 arrives its rows move into block 1 as the original API does:
 * they count and show as mined at height 1, with tx_index + 1 (so they share indexes with block 1's own
 * txs) and their block-0 times. Both blocks' tx-id lists are read back.
 */
export async function adoptGenesisRows(
  sql: TransactionSql,
  genesisIndexBlockHash: string,
  block: {
    index_block_hash: string;
    block_hash: string;
    block_height: number;
    burn_block_time: number;
    burn_block_height: number;
    parent_block_hash: string;
    parent_index_block_hash: string;
  },
): Promise<void> {
  const txIndexShift = 1;
  await sql`
    UPDATE txs SET index_block_hash = ${block.index_block_hash}, block_hash = ${block.block_hash},
      block_height = ${block.block_height}, burn_block_time = ${block.burn_block_time},
      burn_block_height = ${block.burn_block_height}, parent_block_hash = ${block.parent_block_hash},
      parent_index_block_hash = ${block.parent_index_block_hash}, tx_index = tx_index + ${txIndexShift},
      canonical = true
    WHERE index_block_hash = ${genesisIndexBlockHash}`;
  for (const table of ['events', 'principal_txs'] as const) {
    await sql`
      UPDATE ${sql(table)} SET index_block_hash = ${block.index_block_hash}, block_height = ${block.block_height},
        tx_index = tx_index + ${txIndexShift}, canonical = true
      WHERE index_block_hash = ${genesisIndexBlockHash}`;
  }
  // each block's tx-id list is its stored rows': block 1's gains them, block 0's is left empty
  await Promise.all([
    storeBlockTxIds(sql, block.index_block_hash),
    storeBlockTxIds(sql, genesisIndexBlockHash),
  ]);
  await sql`
    UPDATE smart_contracts SET index_block_hash = ${block.index_block_hash}, block_height = ${block.block_height},
      canonical = true
    WHERE index_block_hash = ${genesisIndexBlockHash}`;
}

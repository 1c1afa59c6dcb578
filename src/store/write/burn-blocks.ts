import type { TransactionSql } from '../db.js';

export interface BurnBlockRow {
  burn_block_hash: string;
  burn_block_height: number;
  burn_amount: string;
  reward_recipients: unknown[];
  reward_slot_holders: unknown[];
}

/**
 * Records a burn block. The newest burn block at a height wins: any other block at that height or above
 * belongs to a burnchain fork the node abandoned (`orphanOtherBurnBlocks`, to run when this one was added).
 * Returns the stored row when the hash was already known (it is kept as it is), else undefined.
 */
export async function insertBurnBlock(
  sql: TransactionSql,
  row: BurnBlockRow,
): Promise<BurnBlockRow | undefined> {
  const [known] = await sql<BurnBlockRow[]>`
    WITH stored AS (
      SELECT burn_block_hash, burn_block_height, burn_amount::text, reward_recipients, reward_slot_holders
      FROM burn_blocks WHERE burn_block_hash = ${row.burn_block_hash}
    ),
    inserted AS (
      INSERT INTO burn_blocks (burn_block_hash, burn_block_height, burn_amount, reward_recipients,
        reward_slot_holders, canonical)
      VALUES (${row.burn_block_hash}, ${row.burn_block_height}, ${row.burn_amount},
        ${sql.json(row.reward_recipients as never)}, ${sql.json(row.reward_slot_holders as never)}, true)
      ON CONFLICT (burn_block_hash) DO NOTHING
    )
    SELECT * FROM stored`;
  return known;
}

/** Other burn blocks at this one's height or above are no longer canonical. Sent at once (see `sendAll`). */
export function orphanOtherBurnBlocks(
  sql: TransactionSql,
  row: Pick<BurnBlockRow, 'burn_block_hash' | 'burn_block_height'>,
): Promise<unknown> {
  return sql`
    UPDATE burn_blocks SET canonical = false
    WHERE burn_block_height >= ${row.burn_block_height} AND burn_block_hash <> ${row.burn_block_hash} AND canonical`.execute();
}

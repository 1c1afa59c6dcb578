import type { TransactionSql } from '../store/db.js';
import { sendAll } from '../store/write/bulk.js';
import { insertBurnBlock, orphanOtherBurnBlocks, type BurnBlockRow } from '../store/write/burn-blocks.js';
import { lockChainTip, raiseBurnTip } from '../store/write/tip.js';
import type { NewBurnBlock } from '../protocol/payloads.js';
import type { ApplyContext } from './context.js';

/** What a burn block's rewards say, in a form that compares (jsonb keeps object keys in its own order). */
function rewardsText(row: Pick<BurnBlockRow, 'burn_amount' | 'reward_recipients' | 'reward_slot_holders'>) {
  const recipients = (row.reward_recipients as { recipient: string; amt: unknown }[]).map(
    (r) => `${r.recipient}:${String(r.amt)}`,
  );
  return JSON.stringify([String(row.burn_amount), recipients, row.reward_slot_holders]);
}

/**
 * Applies `/new_burn_block`. A new burn block becomes the burn tip at its height. A known one announced again
 * is that block (its hash commits to it) and changes nothing: `duplicate`, or `reannounced` when the
 * message's rewards differ from the stored ones (logged, counted); the node gets its 200 either way.
 */
export async function applyNewBurnBlock(
  sql: TransactionSql,
  msg: NewBurnBlock,
  ctx: ApplyContext,
): Promise<'applied' | 'duplicate' | 'reannounced'> {
  const row: BurnBlockRow = {
    burn_block_hash: msg.burn_block_hash,
    burn_block_height: msg.burn_block_height,
    burn_amount: String(msg.burn_amount ?? 0),
    reward_recipients: msg.reward_recipients ?? [],
    reward_slot_holders: msg.reward_slot_holders ?? [],
  };
  // the tip lock and the insert are sent together (pipelined), as are the two updates
  const [, known] = await Promise.all([lockChainTip(sql), insertBurnBlock(sql, row)]);
  if (!known) {
    await sendAll([orphanOtherBurnBlocks(sql, row), raiseBurnTip(sql, msg.burn_block_height)]);
    return 'applied';
  }
  return sameBurnBlock(known, row, ctx) ? 'duplicate' : 'reannounced';
}

function sameBurnBlock(known: BurnBlockRow, row: BurnBlockRow, ctx: ApplyContext): boolean {
  if (known.burn_block_height === row.burn_block_height && rewardsText(known) === rewardsText(row))
    return true;
  ctx.logger.warn(
    {
      burn_block_hash: row.burn_block_hash,
      stored_height: known.burn_block_height,
      received_height: row.burn_block_height,
      received_content_hash: ctx.contentHash,
    },
    'a known burn block was announced again with other content: the stored one is kept',
  );
  return false;
}

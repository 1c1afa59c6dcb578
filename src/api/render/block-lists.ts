import type { BurnBlockRecord } from '../../store/read/block-lists.js';
import { isoTime } from './time.js';

// Burn block records → the burn block object (docs/upstream.md C.3, C.4).

export function burnBlock(b: BurnBlockRecord) {
  return {
    burn_block_time: b.burn_block_time,
    burn_block_time_iso: isoTime(b.burn_block_time),
    burn_block_hash: b.burn_block_hash,
    burn_block_height: b.burn_block_height,
    stacks_blocks: b.stacks_blocks,
    // to 2 decimals, as the original rounds it; one block has no gap
    avg_block_time: b.avg_block_time === null ? 0 : Math.round(b.avg_block_time * 100) / 100,
    total_tx_count: b.total_tx_count,
  };
}

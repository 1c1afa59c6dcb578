import { sortedKeys, type StacksBlock } from './block-messages.js';

// Miner rewards: a tenure's coinbase (a block's, in epoch 2.x) and the fees of the txs it mined are paid
// MINER_REWARD_MATURITY tenures later, listed in `matured_miner_rewards` of the block that opens that tenure.

/** Tenures before a coinbase matures (mainnet: 100; shortened so small demo chains show rewards). */
const MINER_REWARD_MATURITY = 10;
const COINBASE_USTX = '1000000000';

/** A miner's reward for a tenure (a block in epoch 2.x). */
export interface Reward {
  miner: string;
  recipient: string;
  fees: bigint;
  /** the block holding the tenure's coinbase */
  block: StacksBlock;
}

export class MinerRewards {
  /** the rewards not yet matured, by tenure height */
  private readonly byTenure = new Map<number, Reward>();

  /** @param modernNode the chain is posted as a 3.x node posts it (keys in alphabetical order) */
  constructor(private readonly modernNode: boolean) {}

  record(tenureHeight: number, reward: Reward) {
    this.byTenure.set(tenureHeight, reward);
  }

  /**
   * The reward that matures with the coinbase of tenure `tenureHeight` (in epoch 2.x every block has one, and
   * its tenure height is its height): that of the tenure `MINER_REWARD_MATURITY` earlier.
   */
  matured(tenureHeight: number): Reward | null {
    const reward = this.byTenure.get(tenureHeight - MINER_REWARD_MATURITY);
    this.byTenure.delete(tenureHeight - MINER_REWARD_MATURITY - 1);
    return reward ?? null;
  }

  /** `matured_miner_rewards` (read when the message is written: a Nakamoto block's hashes are known then). */
  json(reward: Reward | null): object[] {
    if (!reward) return [];
    const json = {
      recipient: reward.recipient,
      miner_address: reward.miner,
      coinbase_amount: COINBASE_USTX,
      tx_fees_anchored: reward.fees.toString(),
      tx_fees_streamed_confirmed: '0',
      tx_fees_streamed_produced: '0',
      from_stacks_block_hash: reward.block.blockHash,
      from_index_consensus_hash: reward.block.indexBlockHash,
    };
    return [this.modernNode ? sortedKeys(json) : json];
  }
}

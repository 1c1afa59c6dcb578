import type { MessageEmitter } from './emitter.js';
import { preparedCycle, type SignerSet } from './nakamoto.js';
import { derivedBytes, type Random } from './random.js';

// The Bitcoin chain under the Stacks chain: a burn block every ten minutes (give or take two), each announced
// with `/new_burn_block` before the Stacks blocks it carries. Hashes and times derive from the seed and the
// height, so a block's parent burn block is known without keeping it.

export interface BurnBlock {
  height: number;
  hash: string;
  /** unix time (s) */
  time: number;
  /** what the block commits spent */
  amount: number;
}

const START_BURN_HEIGHT = 840_000;
const BURN_INTERVAL = 600;

/** The consensus hash of the sortition at a burn height (what a block's index hash commits to). */
export function consensusHash(seed: string, burnHeight: number): Buffer {
  return derivedBytes(seed, `consensus:${burnHeight}`, 20);
}

export class Burnchain {
  /** the height of the last burn block announced */
  height = START_BURN_HEIGHT - 1;

  /**
   * @param signerSet the stackers whose reward slots a 3.x node's burn blocks pay; null: the chain is posted
   * as a 2.x node posts it
   */
  constructor(
    private readonly seed: string,
    private readonly startTime: number,
    private readonly random: Random,
    private readonly emitter: MessageEmitter,
    private readonly signerSet: SignerSet | null,
  ) {}

  time(height: number): number {
    const jitter = derivedBytes(this.seed, `burn-time:${height}`)[0] % 120;
    return this.startTime + (height - START_BURN_HEIGHT) * BURN_INTERVAL + jitter;
  }

  hash(height: number): string {
    const bytes = Buffer.from(derivedBytes(this.seed, `burn:${height}`));
    bytes.fill(0, 0, 8);
    return '0x' + bytes.toString('hex');
  }

  /** The next burn block, announced with `/new_burn_block`. */
  next(): BurnBlock {
    const height = ++this.height;
    const amount = this.random.int(10_000, 2_000_000);
    const block = { height, hash: this.hash(height), time: this.time(height), amount };
    const signerSet = this.signerSet;
    this.emitter.plan({
      at: block.time * 1000 + 1000,
      path: '/new_burn_block',
      payload: () =>
        signerSet
          ? this.modernPayload(block, signerSet)
          : {
              burn_block_hash: block.hash,
              burn_block_height: block.height,
              burn_amount: amount,
              reward_recipients: [],
              reward_slot_holders: [],
            },
    });
    return block;
  }

  /**
   * `/new_burn_block` as a 3.x node posts it. In a reward phase the block commits pay two reward slots of
   * the signer set's stackers (nothing is burnt); in a prepare phase they burn.
   */
  private modernPayload(block: BurnBlock, signerSet: SignerSet) {
    const amount = block.amount;
    const slots = signerSet.rewardedAddresses;
    const paid =
      preparedCycle(block.height) === null
        ? [0, 1].map((k) => slots[(2 * block.height + k) % slots.length])
        : [];
    return {
      burn_amount: paid.length > 0 ? 0 : amount,
      burn_block_hash: block.hash,
      burn_block_height: block.height,
      consensus_hash: '0x' + consensusHash(this.seed, block.height).toString('hex'),
      parent_burn_block_hash: this.hash(block.height - 1),
      reward_recipients: paid.map((recipient) => ({ amt: Math.floor(amount / 2), recipient })),
      reward_slot_holders: paid,
    };
  }
}

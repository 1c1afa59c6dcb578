import type { TxDraft } from './drafts.js';
import type { Random } from './random.js';

// The txs users have sent and miners have not yet mined, in the order they are mined: first in, first out.
// Txs are drafted (and applied to the ledger) in that order, so a block mines exactly the txs the ledger
// expects, and the queue holds txs across blocks as a node's mempool does.

export class MiningQueue {
  private txs: TxDraft[] = [];
  /** the index of the next tx to mine: the array is compacted now and then, not shifted per tx */
  private head = 0;

  constructor(
    private readonly random: Random,
    private readonly txsPerBlock: number,
  ) {}

  get length(): number {
    return this.txs.length - this.head;
  }

  /** The next tx to mine, left in the queue. */
  peek(): TxDraft | undefined {
    return this.txs[this.head];
  }

  push(txs: TxDraft[]) {
    for (const tx of txs) this.txs.push(tx);
  }

  /** Takes up to `max` txs, oldest first. */
  take(max: number): TxDraft[] {
    const end = Math.min(this.txs.length, this.head + Math.max(0, max));
    const out = this.txs.slice(this.head, end);
    this.head = end;
    if (this.head > 4096 && this.head * 2 > this.txs.length) {
      this.txs = this.txs.slice(this.head);
      this.head = 0;
    }
    return out;
  }

  /** Txs the next block mines: about one interval's worth, more when the backlog grows past 1.5 of them. */
  blockCapacity(): number {
    const base = Math.round(this.txsPerBlock * (0.6 + 0.6 * this.random.float()));
    return Math.max(1, base + Math.max(0, this.length - Math.round(this.txsPerBlock * 1.5)));
  }
}

import type { StacksBlock } from './block-messages.js';
import type { TxDraft } from './drafts.js';
import type { MessageEmitter } from './emitter.js';
import type { MempoolModel } from './mempool-model.js';
import type { MiningQueue } from './mining-queue.js';
import type { Random } from './random.js';
import type { Ledger } from './ledger.js';
import type { TxMix } from './tx-mix.js';

// Between two blocks, users send txs and the node tells the observer about its mempool: half the new txs are
// announced with `/new_mempool_tx` (the rest are first seen in a block), now and then a transfer is replaced
// by fee (its cheaper first version announced, then the replacement, then the first dropped), a transfer
// waits on a nonce gap until the node drops it as stale. Every tx sent joins the mining queue; the stuck and
// replaced versions never do.

interface Replaced {
  original: TxDraft;
  replacement: TxDraft;
}

export class MempoolChurn {
  /** txs waiting on a nonce gap, and the height whose interval drops them */
  private stuck: { tx: TxDraft; dropAt: number }[] = [];

  constructor(
    private readonly parts: {
      random: Random;
      ledger: Ledger;
      mix: TxMix;
      queue: MiningQueue;
      emitter: MessageEmitter;
      mempool: MempoolModel;
      txsPerBlock: number;
      startTime: number;
    },
  ) {}

  /**
   * The txs sent before block `height` and the mempool messages meanwhile. `burnHeight`: that of the block to
   * come (for STX locks); `tip`: the block the messages follow.
   */
  interval(height: number, burnHeight: number, tip: StacksBlock | null) {
    const { random, queue, emitter } = this.parts;
    const sent = this.send(height, burnHeight);
    queue.push(sent);
    for (const tx of sent) emitter.queueSigning(tx);

    const announced = sent.filter(() => random.chance(0.5));
    const replaced = this.replaceByFee(height, sent, announced);
    if (replaced) announced.push(replaced.original);
    const stuck = this.stuckTransfer(height);
    if (stuck) announced.push(stuck);
    const stale = this.stale(height);

    // messages follow the tip: a minute after an epoch 2.x block, a second after a Nakamoto one (the next
    // comes seconds later), a few hundred milliseconds apart
    const nakamoto = tip?.nakamoto ?? false;
    const step = nakamoto ? 250 : 1000;
    let at = (tip?.time ?? this.parts.startTime) * 1000 + (nakamoto ? 750 : 60_000);
    if (announced.length > 0) this.announce(announced, (at += step));
    if (replaced) {
      this.announce([replaced.replacement], (at += step));
      this.drop([replaced.original], 'ReplaceByFee', replaced.replacement, (at += step));
    }
    if (stale.length > 0) this.drop(stale, 'StaleGarbageCollect', null, (at += step));
  }

  /** The txs users send in one block interval (first, at height 2, the contract deploys). */
  private send(height: number, burnHeight: number): TxDraft[] {
    const { random, mix, txsPerBlock } = this.parts;
    const sent: TxDraft[] = height === 2 ? [...mix.deployContracts()] : [];
    const n = Math.round(txsPerBlock * (0.6 + 0.8 * random.float()));
    for (let i = 0; i < n; i++) {
      const tx = mix.next(burnHeight);
      if (tx) sent.push(tx);
    }
    return sent;
  }

  /** Now and then (always at height 3), a transfer sent but not announced is replaced by fee. */
  private replaceByFee(height: number, sent: TxDraft[], announced: TxDraft[]): Replaced | null {
    if (height < 3 || !this.parts.random.chance(height === 3 ? 1 : 0.12)) return null;
    const replacement = sent.find(
      (tx) => tx.kind === 'stx_transfer' && tx.request!.sponsor < 0 && !announced.includes(tx),
    );
    if (!replacement) return null;
    return { original: this.parts.ledger.replacedVersion(replacement), replacement };
  }

  /** Now and then (always at height 3), a transfer stuck on a nonce gap, dropped 20 to 40 heights later. */
  private stuckTransfer(height: number): TxDraft | null {
    const { random, ledger } = this.parts;
    if (height < 3 || !random.chance(height === 3 ? 1 : 0.1)) return null;
    const tx = ledger.stuckTransfer();
    this.stuck.push({ tx, dropAt: height + random.int(20, 40) });
    return tx;
  }

  /** The stuck txs whose time is up at `height`: the node drops them as stale. */
  private stale(height: number): TxDraft[] {
    const stale = this.stuck.filter((s) => s.dropAt <= height).map((s) => s.tx);
    this.stuck = this.stuck.filter((s) => s.dropAt > height);
    return stale;
  }

  private announce(txs: TxDraft[], at: number) {
    const { emitter, mempool } = this.parts;
    emitter.plan({
      at,
      path: '/new_mempool_tx',
      payload: () => txs.map((tx) => tx.rawTx),
      onWrite: () => mempool.receive(txs, Math.floor(at / 1000)),
    });
    for (const tx of txs) emitter.queueSigning(tx);
  }

  private drop(txs: TxDraft[], reason: string, replacement: TxDraft | null, at: number) {
    this.parts.emitter.plan({
      at,
      path: '/drop_mempool_tx',
      payload: () => ({
        dropped_txids: txs.map((tx) => tx.txid),
        reason,
        new_txid: replacement?.txid ?? null,
      }),
      onWrite: () => this.parts.mempool.drop(txs.map((tx) => tx.txid)),
    });
  }
}

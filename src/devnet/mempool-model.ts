import type { TxDraft } from './drafts.js';

// What the indexer's mempool will hold after the generated stream: the generator follows the same rules
// (store/write/mempool.ts) over the messages it emits, so it can report how many txs end up pending. The
// indexer's own garbage-collection age is its caller's to give (the devnet never reads the store).
// Pending = announced, not mined on the canonical chain, not dropped, not replaced by fee, not collected.

interface Entry {
  key: string;
  fee: number;
  receiptTime: number;
  receiptHeight: number;
  txid: string;
}

export class MempoolModel {
  private readonly pending = new Map<string, Entry>();
  private readonly byKey = new Map<string, Set<string>>();
  tipHeight = 0;

  /**
   * @param gcBlocks the indexer's mempool garbage-collection age in blocks, @param gcMinutes in minutes once
   * blocks are Nakamoto blocks; undefined: no collection
   */
  constructor(
    private readonly gcBlocks?: number,
    private readonly gcMinutes?: number,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  has(txid: string): boolean {
    return this.pending.has(txid);
  }

  private keyOf(tx: TxDraft): string {
    return `${tx.senderAddress}:${tx.nonce}`;
  }

  private add(tx: TxDraft, receiptTime: number, receiptHeight: number) {
    if (this.pending.has(tx.txid)) return;
    const entry: Entry = { key: this.keyOf(tx), fee: tx.fee, receiptTime, receiptHeight, txid: tx.txid };
    this.pending.set(tx.txid, entry);
    let set = this.byKey.get(entry.key);
    if (!set) this.byKey.set(entry.key, (set = new Set()));
    set.add(tx.txid);
  }

  private remove(txid: string) {
    const entry = this.pending.get(txid);
    if (!entry) return;
    this.pending.delete(txid);
    const set = this.byKey.get(entry.key)!;
    set.delete(txid);
    if (set.size === 0) this.byKey.delete(entry.key);
  }

  /** `/new_mempool_tx`: new pending txs; among those spending one (sender, nonce), the highest fee stays. */
  receive(txs: TxDraft[], receiptTime: number) {
    for (const tx of txs) this.add(tx, receiptTime, this.tipHeight);
    for (const tx of txs) {
      const set = this.byKey.get(this.keyOf(tx));
      if (!set || set.size < 2) continue;
      const ranked = [...set]
        .map((id) => this.pending.get(id)!)
        .sort(
          (a, b) =>
            b.fee - a.fee ||
            b.receiptTime - a.receiptTime ||
            (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0),
        );
      for (const loser of ranked.slice(1)) this.remove(loser.txid);
    }
  }

  drop(txids: string[]) {
    for (const id of txids) this.remove(id);
  }

  /** Txs of an unconfirmed microblock: pruned by id. */
  microblock(txs: TxDraft[]) {
    for (const tx of txs) this.remove(tx.txid);
  }

  private prune(txs: TxDraft[]) {
    for (const tx of txs) {
      this.remove(tx.txid);
      const set = this.byKey.get(this.keyOf(tx));
      if (set) for (const id of [...set]) this.remove(id);
    }
  }

  /**
   * A canonical block (its own and its confirmed microblock txs) received at `receiptTime`. On a reorg,
   * `orphaned` are the txs of the blocks it orphans that the restored fork does not contain (back to
   * pending), and `restored` the txs of the restored blocks. After a Nakamoto block, txs are collected by
   * age in minutes rather than in blocks.
   */
  block(
    txs: TxDraft[],
    height: number,
    receiptTime: number,
    reorg?: { orphaned: TxDraft[]; restored: TxDraft[] },
    nakamoto = false,
  ) {
    if (reorg) {
      this.prune(reorg.restored);
      for (const tx of reorg.orphaned) this.add(tx, receiptTime, this.tipHeight);
    }
    this.prune(txs);
    this.tipHeight = height;
    const stale = nakamoto
      ? this.gcMinutes !== undefined && ((e: Entry) => e.receiptTime < receiptTime - this.gcMinutes! * 60)
      : this.gcBlocks !== undefined && ((e: Entry) => e.receiptHeight <= height - this.gcBlocks!);
    if (!stale) return;
    for (const entry of [...this.pending.values()]) if (stale(entry)) this.remove(entry.txid);
  }
}

import type { TxDraft } from './drafts.js';

// What the indexer's mempool will hold after the generated stream: the generator follows the same rules
// (store/write/mempool.ts, "Same-nonce txs") over the messages it emits, so it can report how many txs end
// up pending. The indexer's own garbage-collection age is its caller's to give (the devnet never reads the
// store). Pending = announced, not mined on the canonical chain, not dropped, not replaced, not collected.

interface Row {
  txid: string;
  sender: string;
  sponsor: string | null;
  nonce: number;
  fee: number;
  receiptTime: number;
  receiptHeight: number;
  /** no longer pending (mined, dropped, replaced or collected) */
  pruned: boolean;
}

/** The (payer, nonce) pair a tx claims: its sponsor's address (else its sender's) and its origin nonce. */
const pairOf = (tx: TxDraft) => `${tx.sponsorAddress ?? tx.senderAddress}:${tx.nonce}`;

export class MempoolModel {
  /** every tx the mempool has seen, pending or not */
  private readonly rows = new Map<string, Row>();
  /** the rows whose sender or sponsor is an address, with a nonce: `${address}:${nonce}` */
  private readonly byAddressNonce = new Map<string, Set<string>>();
  /** txs mined on the canonical chain (blocks and unconfirmed microblocks) */
  private readonly mined = new Map<string, TxDraft>();
  /** canonical mined txs by `${address}:${nonce}` of their sender and of their sponsor */
  private readonly minedByAddressNonce = new Map<string, Set<string>>();
  private pendingCount = 0;
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
    return this.pendingCount;
  }

  has(txid: string): boolean {
    const row = this.rows.get(txid);
    return row !== undefined && !row.pruned;
  }

  private setPruned(row: Row, pruned: boolean) {
    if (row.pruned === pruned) return;
    row.pruned = pruned;
    this.pendingCount += pruned ? -1 : 1;
  }

  private static index(map: Map<string, Set<string>>, tx: TxDraft, add: boolean) {
    const keys = [`${tx.senderAddress}:${tx.nonce}`];
    if (tx.sponsorAddress) keys.push(`${tx.sponsorAddress}:${tx.nonce}`);
    for (const key of keys) {
      let set = map.get(key);
      if (add) {
        if (!set) map.set(key, (set = new Set()));
        set.add(tx.txid);
      } else if (set) {
        set.delete(tx.txid);
        if (set.size === 0) map.delete(key);
      }
    }
  }

  private setMined(tx: TxDraft, mined: boolean) {
    if (mined === this.mined.has(tx.txid)) return;
    if (mined) this.mined.set(tx.txid, tx);
    else this.mined.delete(tx.txid);
    MempoolModel.index(this.minedByAddressNonce, tx, mined);
  }

  /** Resolves the pairs `txs` claim: the mined tx, else the best fee, wins; the other members are replaced. */
  private resolve(txs: TxDraft[]) {
    for (const pair of new Set(txs.map(pairOf))) {
      const members = [...(this.byAddressNonce.get(pair) ?? [])].map((id) => this.rows.get(id)!);
      if (members.length === 0) continue;
      const minedHere = this.minedByAddressNonce.get(pair);
      let winner: string;
      if (minedHere && minedHere.size > 0) {
        winner = [...minedHere].at(-1)!;
      } else {
        const [best] = [...members].sort(
          (a, b) =>
            b.fee - a.fee ||
            b.receiptTime - a.receiptTime ||
            (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0),
        );
        winner = best.txid;
      }
      for (const row of members) if (row.txid !== winner) this.setPruned(row, true);
    }
  }

  /**
   * A tx back in the mempool as pending (or new there), unless it is mined. A tx announced again is
   * received anew; one restored by a reorg keeps its receipt.
   */
  private upsert(tx: TxDraft, receiptTime: number, receiptHeight: number, announced = true): boolean {
    const existing = this.rows.get(tx.txid);
    if (existing) {
      if (!existing.pruned || this.mined.has(tx.txid)) return false;
      if (announced) {
        existing.receiptTime = receiptTime;
        existing.receiptHeight = receiptHeight;
      }
      this.setPruned(existing, false);
      return true;
    }
    const row: Row = {
      txid: tx.txid,
      sender: tx.senderAddress,
      sponsor: tx.sponsorAddress ?? null,
      nonce: tx.nonce,
      fee: tx.fee,
      receiptTime,
      receiptHeight,
      pruned: true,
    };
    this.rows.set(tx.txid, row);
    MempoolModel.index(this.byAddressNonce, tx, true);
    this.setPruned(row, this.mined.has(tx.txid));
    return true;
  }

  /** `/new_mempool_tx`: new (or revived) txs, then their pairs resolved. */
  receive(txs: TxDraft[], receiptTime: number) {
    const changed = txs.filter((tx) => this.upsert(tx, receiptTime, this.tipHeight));
    this.resolve(changed);
  }

  /** `/drop_mempool_tx`: pending txs only. */
  drop(txids: string[]) {
    for (const id of txids) {
      const row = this.rows.get(id);
      if (row) this.setPruned(row, true);
    }
  }

  /** Txs of an unconfirmed microblock: mined, pruned by id. */
  microblock(txs: TxDraft[]) {
    for (const tx of txs) {
      this.setMined(tx, true);
      const row = this.rows.get(tx.txid);
      if (row) this.setPruned(row, true);
    }
  }

  private prune(txs: TxDraft[]) {
    for (const tx of txs) {
      this.setMined(tx, true);
      const row = this.rows.get(tx.txid);
      if (row) this.setPruned(row, true);
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
      for (const tx of reorg.orphaned) this.setMined(tx, false);
      this.prune(reorg.restored);
      this.resolve(reorg.restored);
      for (const tx of reorg.orphaned) this.upsert(tx, receiptTime, this.tipHeight, false);
    }
    this.prune(txs);
    this.resolve(txs);
    this.tipHeight = height;
    const stale = nakamoto
      ? this.gcMinutes !== undefined && ((r: Row) => r.receiptTime < receiptTime - this.gcMinutes! * 60)
      : this.gcBlocks !== undefined && ((r: Row) => r.receiptHeight <= height - this.gcBlocks!);
    if (!stale) return;
    for (const row of this.rows.values()) if (!row.pruned && stale(row)) this.setPruned(row, true);
  }
}

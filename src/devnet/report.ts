import type { StacksBlock } from './block-messages.js';
import { TX_TYPES, type TxDraft } from './drafts.js';
import type { Ledger } from './ledger.js';
import { vrfPublicKey } from './vrf.js';

// What `generate` prints once the chain is written: its shape (tip, tenures, forks, microblocks), its counts
// (messages, txs and events, the mempool left), the signing speed, and a few ids to try the API with.

export interface GenerateReport {
  seed: string;
  tipHeight: number;
  tipIndexBlockHash: string;
  /** tenure height of the tip (its coinbase count: the block height in epoch 2.x) */
  tipTenureHeight: number;
  /** height of the first Nakamoto block, or null for an epoch 2.x chain */
  nakamotoHeight: number | null;
  /** Nakamoto tenures started (block-found tenure changes) and extended (extended tenure changes) */
  tenures: number;
  tenureExtends: number;
  /** every message written, by path */
  messages: number;
  paths: Record<string, number>;
  /** distinct txs mined on the canonical chain (anchored blocks, incl. confirmed microblock txs) */
  canonicalTxs: number;
  /** of which failed (abort_by_response) */
  failedTxs: number;
  /** canonical txs by the API's `tx_type` */
  txTypes: Record<string, number>;
  /** txs only ever mined in orphaned blocks */
  orphanedTxs: number;
  reorgs: number;
  microblocks: number;
  microblockTxs: number;
  /** txs pending in the mempool at the end (by the indexer's rules) */
  mempoolPending: number;
  /** events of successful canonical txs, by type */
  events: Record<string, number>;
  signedTxs: number;
  seconds: number;
  signedTxsPerSecond: number;
  /** the miners: their addresses and the VRF public keys (hex) their coinbases prove with */
  miners: { address: string; vrfPublicKey: string }[];
  /** handy ids for trying the API */
  sample: {
    busyAddress: string;
    tokenContract: string;
    nftContract: string;
    txId: string;
    blockHeight: number;
  };
}

/** The report, filled in as blocks are planned; `finish` completes it once every message is written. */
export class ReportBuilder {
  readonly report: GenerateReport;
  /** the first successful canonical FT transfer: the sample tx */
  private sampleTx: TxDraft | null = null;

  constructor(
    seed: string,
    nakamotoHeight: number | null,
    private readonly ledger: Ledger,
  ) {
    this.report = {
      seed,
      tipHeight: 0,
      tipIndexBlockHash: '',
      tipTenureHeight: 0,
      nakamotoHeight,
      tenures: 0,
      tenureExtends: 0,
      messages: 0,
      paths: {},
      canonicalTxs: 0,
      failedTxs: 0,
      txTypes: {},
      orphanedTxs: 0,
      reorgs: 0,
      microblocks: 0,
      microblockTxs: 0,
      mempoolPending: 0,
      events: {},
      signedTxs: 0,
      seconds: 0,
      signedTxsPerSecond: 0,
      miners: ledger.miners.map((m, i) => ({
        address: m.address,
        vrfPublicKey: vrfPublicKey(ledger.vrfKey(i)).toString('hex'),
      })),
      sample: {
        busyAddress: ledger.address(0),
        tokenContract: '',
        nftContract: '',
        txId: '',
        blockHeight: 0,
      },
    };
  }

  /** A block canonical when it arrives, mined on top of the others (or restored by the next block). */
  canonicalBlock(block: StacksBlock, txs: TxDraft[]) {
    const report = this.report;
    for (const tx of txs) {
      report.canonicalTxs++;
      const type = TX_TYPES[tx.kind];
      report.txTypes[type] = (report.txTypes[type] ?? 0) + 1;
      if (tx.status !== 'success') {
        report.failedTxs++;
        continue;
      }
      for (const e of tx.events) report.events[e.type] = (report.events[e.type] ?? 0) + 1;
      if (!this.sampleTx && tx.kind === 'ft_transfer') this.sampleTx = tx;
    }
    report.tipHeight = block.height;
    report.tipTenureHeight = block.tenureHeight;
  }

  /** The report, once every message is written (the sample tx is signed). */
  finish(done: {
    messages: number;
    paths: Record<string, number>;
    signedTxs: number;
    mempoolPending: number;
    seconds: number;
  }): GenerateReport {
    const report = this.report;
    report.messages = done.messages;
    report.paths = done.paths;
    report.signedTxs = done.signedTxs;
    report.mempoolPending = done.mempoolPending;
    report.sample.tokenContract = this.ledger.token?.id ?? '';
    report.sample.nftContract = this.ledger.collection?.id ?? '';
    report.sample.txId = this.sampleTx?.txid ?? '';
    report.sample.blockHeight = Math.max(1, Math.floor(report.tipHeight * 0.7));
    report.seconds = done.seconds;
    report.signedTxsPerSecond = Math.round(report.signedTxs / Math.max(done.seconds, 1e-9));
    return report;
  }
}

import { availableParallelism } from 'node:os';
import { RewardSetAnnouncements, type StacksBlock } from './block-messages.js';
import { Burnchain } from './burnchain.js';
import type { TxDraft } from './drafts.js';
import { MessageEmitter, type GenerateProgress, type MessageSink } from './emitter.js';
import { MempoolChurn } from './mempool-churn.js';
import { MempoolModel } from './mempool-model.js';
import { MinerRewards } from './miner-rewards.js';
import { MiningQueue } from './mining-queue.js';
import { SignerSet } from './nakamoto.js';
import { Random } from './random.js';
import { ReportBuilder, type GenerateReport } from './report.js';
import { SignerPool } from './signer-pool.js';
import { Ledger } from './ledger.js';
import { TxMix } from './tx-mix.js';

// One simulated network, built from the generator's options: the burnchain, the users' ledger and the txs
// they send, the mempool, the miners and their rewards, the messages the node posts, and the tip of the
// Stacks chain. The block producers (epoch2.ts, tenures.ts) share it. Every decision draws from one seeded
// stream (`random`), so the order of the calls is part of the output: the same seed, the same chain.

export interface GenerateOptions {
  /** tip height of the canonical chain */
  blocks: number;
  accounts: number;
  seed: string;
  /** average user transactions per block (default 20) */
  txsPerBlock?: number;
  /** signer threads (default: one per core; 0 signs in this thread) */
  workers?: number;
  /** unix time (s) of the first burn block (default 2024-01-01T00:00:00Z) */
  startTime?: number;
  /**
   * height of the first epoch 3.0 (Nakamoto) block; without it the chain stays in epoch 2.x and is posted
   * as a 2.x node posts it (`defaultNakamotoHeight` is where the demo and the bench put it)
   */
  nakamotoHeight?: number;
  /**
   * the indexer's mempool garbage-collection age in blocks (epoch 2.x) and minutes (Nakamoto blocks), so
   * `mempoolPending` counts what the indexer keeps (store/write/mempool.ts); without them the report counts
   * what the node keeps
   */
  mempoolGcBlocks?: number;
  mempoolGcMinutes?: number;
  onProgress?: (progress: GenerateProgress) => void;
}

const DEFAULT_START_TIME = 1_704_067_200;
const MINERS = 3;
/** Reward slots of each signer (the signer set's weights). */
const SIGNER_WEIGHTS = [4, 3, 2, 1];

export class Devnet {
  readonly seed: string;
  /** tip height of the canonical chain */
  readonly blocks: number;
  /** the last height of epoch 2.x (the tip height if the chain never enters Nakamoto) */
  readonly epoch2Tip: number;
  /** the chain is posted as a 3.x node posts it (given a Nakamoto height, even one beyond the tip) */
  readonly modernNode: boolean;
  readonly random: Random;
  readonly ledger: Ledger;
  readonly signerSet: SignerSet;
  readonly emitter: MessageEmitter;
  readonly burnchain: Burnchain;
  readonly queue: MiningQueue;
  readonly mix: TxMix;
  /** the indexer's mempool, as the messages leave it */
  readonly mempool: MempoolModel;
  readonly rewards: MinerRewards;
  readonly rewardSets: RewardSetAnnouncements;
  readonly reportBuilder: ReportBuilder;
  /** the report, filled in as blocks are planned */
  readonly report: GenerateReport;
  private readonly churn: MempoolChurn;
  /** the canonical tip (or the block that just arrived, in a fork) */
  tip: StacksBlock | null = null;

  constructor(options: GenerateOptions, sink: MessageSink) {
    const { seed, blocks } = options;
    const txsPerBlock = options.txsPerBlock ?? 20;
    const startTime = options.startTime ?? DEFAULT_START_TIME;
    this.seed = seed;
    this.blocks = blocks;
    this.modernNode = options.nakamotoHeight !== undefined;
    this.epoch2Tip = Math.min(blocks, (options.nakamotoHeight ?? Infinity) - 1);
    this.random = new Random(seed);
    this.ledger = new Ledger(seed, options.accounts, MINERS, this.random);
    this.signerSet = new SignerSet(seed, SIGNER_WEIGHTS);
    const pool = new SignerPool(this.ledger.keys.material(), options.workers ?? availableParallelism());
    this.emitter = new MessageEmitter(pool, sink, options.onProgress);
    const burnSigners = this.modernNode ? this.signerSet : null;
    this.burnchain = new Burnchain(seed, startTime, this.random, this.emitter, burnSigners);
    this.queue = new MiningQueue(this.random, txsPerBlock);
    this.mix = new TxMix(this.ledger, this.random);
    this.mempool = new MempoolModel(options.mempoolGcBlocks, options.mempoolGcMinutes);
    this.rewards = new MinerRewards(this.modernNode);
    this.rewardSets = new RewardSetAnnouncements(this.signerSet);
    const { nakamotoHeight } = options;
    this.reportBuilder = new ReportBuilder(
      seed,
      nakamotoHeight !== undefined && nakamotoHeight <= blocks ? nakamotoHeight : null,
      this.ledger,
    );
    this.report = this.reportBuilder.report;
    this.churn = new MempoolChurn({
      random: this.random,
      ledger: this.ledger,
      mix: this.mix,
      queue: this.queue,
      emitter: this.emitter,
      mempool: this.mempool,
      txsPerBlock,
      startTime,
    });
  }

  /** The txs sent before block `height` and the mempool messages meanwhile (see mempool-churn.ts). */
  interval(height: number, burnHeight = this.burnchain.height + 1) {
    this.churn.interval(height, burnHeight, this.tip);
  }

  /** A miner (other than `not`). */
  pickMiner(not = -1): number {
    for (;;) {
      const m = this.random.int(0, MINERS - 1);
      if (m !== not) return m;
    }
  }

  /** A block canonical when it arrives, mined on top of the others (or restored by the next block). */
  canonical(block: StacksBlock, txs: TxDraft[]) {
    this.reportBuilder.canonicalBlock(block, txs);
    this.mix.mined(txs);
  }
}

import { availableParallelism } from 'node:os';
import type { RecordedMessage } from '../protocol/tsv.js';
import { TX_TYPES, type TxDraft } from './drafts.js';
import {
  sortedKeys,
  sumCosts,
  transactionsAndEvents,
  type MicroblockPlacement,
  type PlacedTx,
} from './format.js';
import { MempoolModel } from './mempool-model.js';
import { SignerSet, preparedCycle, sealNakamotoBlock } from './nakamoto.js';
import { Random, derivedBytes } from './random.js';
import { sha512_256 } from './signer.js';
import { SignerPool } from './signer-pool.js';
import { Ledger, type SealedLater } from './simulation.js';
import { vrfPublicKey } from './vrf.js';
import { TenureChangeCause } from './wire.js';

// The demo-chain generator: a deterministic Stacks event stream, as a stacks-node would post it to an
// event observer, with really signed transactions. Per block interval it drafts user transactions (applied
// to a ledger in mining order, so balances, nonces and events stay consistent), announces some of them to
// the mempool, and mines them first-in first-out, so the mempool holds txs across blocks. Around that:
// burn blocks, coinbases and matured miner rewards, microblock streams confirmed by the next block, short
// forks ("higher wins" reorgs), replace-by-fee and stale drops.
//
// Optionally the chain enters epoch 3.0 (Nakamoto) at a given height, and is then posted as a 3.x node
// posts it, from the first block on. From there on, each burn block elects a miner whose tenure is a few
// blocks seconds apart: the first one opens with a tenure change (block found) and a Nakamoto coinbase
// (with the VRF proof of the miner's election); a burn block without a winner lets the miner extend its
// tenure. Every block carries its own time, the miner's signature and the signer set's signatures over the
// real header hash; no microblocks. See nakamoto.ts.
//
// Signing dominates the cost; drafts are signed in chunks by a pool of worker threads while the next chunk
// is simulated, and messages are written in order once their chunk is signed. Memory stays bounded: the
// ledger is per account, the pending queue about one block deep, and at most a few chunks are in flight.

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

interface GenerateProgress {
  height: number;
  blocks: number;
  txs: number;
  messages: number;
}

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

export type MessageSink = (message: RecordedMessage) => void | Promise<void>;

const START_BURN_HEIGHT = 840_000;
const DEFAULT_START_TIME = 1_704_067_200;
const BURN_INTERVAL = 600;
/** Blocks before a coinbase matures (mainnet: 100; shortened so small demo chains show rewards). */
const MINER_REWARD_MATURITY = 10;
const COINBASE_USTX = '1000000000';
const MINERS = 3;
/** Blocks per Nakamoto tenure (mainnet mines far more; a small chain should still show several tenures). */
const TENURE_BLOCKS = { min: 2, max: 8 };
/** Seconds between Nakamoto blocks. */
const BLOCK_SPACING = { min: 4, max: 12 };
/** Chance that a burn block has no sortition winner: the current miner extends its tenure. */
const EMPTY_SORTITION = 0.08;
/** Chance that a tenure's coinbase pays its reward to another principal. */
const ALT_RECIPIENT = 0.25;
/** Reward slots of each signer (the signer set's weights). */
const SIGNER_WEIGHTS = [4, 3, 2, 1];
/** Chance that a signer's signature is missing from a block (others still hold the threshold). */
const SIGNER_ABSENT = 0.05;
/** PoX force-unlock burn heights of pox-1 to pox-3 on mainnet, as a 3.x node announces them. */
const POX_UNLOCK_HEIGHTS = { v1: 781_552, v2: 787_652, v3: 840_361 };
const CHUNK_TXS = 2048;
const MAX_IN_FLIGHT = 3;
const ZERO_HASH = '0x' + '00'.repeat(32);

interface Plan {
  at: number;
  path: string;
  /** block height, for progress */
  height?: number;
  payload: () => object;
  observe?: () => void;
}

interface BurnInfo {
  height: number;
  hash: string;
  time: number;
  /** what the block commits spent */
  amount: number;
}

interface BlockInfo {
  height: number;
  /** a Nakamoto block's hashes are known once it is written (they hash its header) */
  blockHash: string;
  indexBlockHash: string;
  burn: BurnInfo;
  /** block time: the burn block's in epoch 2.x */
  time: number;
  nakamoto: boolean;
  consensusHash: Buffer;
  tenureHeight: number;
}

/** A miner's reward for a tenure (a block in epoch 2.x), paid `MINER_REWARD_MATURITY` tenures later. */
interface Reward {
  miner: string;
  recipient: string;
  fees: bigint;
  /** the block holding the tenure's coinbase */
  block: BlockInfo;
}

/** What opens a tenure (a block-found tenure change and a coinbase) or extends it (a tenure change). */
interface TenureOpening {
  change: SealedLater;
  coinbase: TxDraft | null;
}

/** The Nakamoto tenure being mined. */
interface Tenure {
  miner: number;
  burn: BurnInfo;
  consensusHash: Buffer;
  tenureHeight: number;
  minerTxid: string;
  burnSpent: number;
  /** blocks mined so far */
  blocks: number;
  reward: Reward;
}

interface Stream {
  placed: PlacedTx[];
  last: MicroblockPlacement;
}

type UserKind =
  | 'stx'
  | 'sponsored'
  | 'memo'
  | 'ft_transfer'
  | 'ft_fail'
  | 'ft_mint'
  | 'ft_burn'
  | 'nft_mint'
  | 'nft_transfer'
  | 'nft_fail'
  | 'nft_burn'
  | 'stack_stx'
  | 'deploy';

/** What every chain shows at least once, early on, however short it is. */
const SHOWCASE: UserKind[] = [
  'stack_stx',
  'sponsored',
  'memo',
  'ft_mint',
  'nft_mint',
  'ft_transfer',
  'ft_fail',
  'nft_mint',
  'nft_transfer',
  'nft_fail',
  'ft_burn',
  'nft_burn',
];

class Planner {
  private readonly random: Random;
  readonly ledger: Ledger;
  private readonly model: MempoolModel;
  private readonly pool: SignerPool;
  private readonly txsPerBlock: number;
  private readonly startTime: number;

  private plans: Plan[] = [];
  private chunkDrafts: TxDraft[] = [];
  private readonly inFlight: { signing: Promise<void>; plans: Plan[] }[] = [];
  private messageId = 0;

  private fifo: TxDraft[] = [];
  private fifoHead = 0;
  private burnHeight = START_BURN_HEIGHT - 1;
  private tip: BlockInfo | null = null;
  private readonly rewards = new Map<number, Reward>();
  private stream: Stream | null = null;
  private stuck: { tx: TxDraft; dropAt: number }[] = [];
  private readonly showcase = [...SHOWCASE];
  private deploys: TxDraft[] = [];
  private readonly forkHeights = new Set<number>();
  private readonly streamHeights = new Set<number>();
  /** the chain is posted as a 3.x node posts it (it enters Nakamoto at some point) */
  private readonly modernNode: boolean;
  /** last height of epoch 2.x */
  private readonly epoch2Tip: number;
  private readonly signerSet: SignerSet;
  private readonly announcedCycles = new Set<number>();
  private tenure: Tenure | null = null;
  private tenureHeight = 0;

  readonly report: GenerateReport;
  private blocksWritten = 0;
  private heightWritten = 0;
  private sampleTx: TxDraft | null = null;
  private txsWritten = 0;

  constructor(
    private readonly options: GenerateOptions,
    private readonly sink: MessageSink,
  ) {
    this.random = new Random(options.seed);
    this.ledger = new Ledger(options.seed, options.accounts, MINERS, this.random);
    this.pool = new SignerPool(this.ledger.keys.material(), options.workers ?? availableParallelism());
    this.txsPerBlock = options.txsPerBlock ?? 20;
    this.startTime = options.startTime ?? DEFAULT_START_TIME;
    this.model = new MempoolModel(options.mempoolGcBlocks, options.mempoolGcMinutes);
    this.modernNode = options.nakamotoHeight !== undefined;
    this.epoch2Tip = Math.min(options.blocks, (options.nakamotoHeight ?? Infinity) - 1);
    this.signerSet = new SignerSet(options.seed, SIGNER_WEIGHTS);
    const n = this.epoch2Tip;
    if (n >= 12) this.forkHeights.add(Math.floor(n * 0.6));
    if (n >= 60) this.forkHeights.add(Math.floor(n * 0.3));
    // one microblock stream is always there (when the chain is long enough to confirm it)
    if (n >= 6) {
      let h = Math.max(3, Math.floor(n * 0.45));
      while (this.forkHeights.has(h) || this.forkHeights.has(h + 1) || this.forkHeights.has(h - 1)) h++;
      if (h < n) this.streamHeights.add(h);
    }
    this.report = {
      seed: options.seed,
      tipHeight: 0,
      tipIndexBlockHash: '',
      tipTenureHeight: 0,
      nakamotoHeight:
        options.nakamotoHeight !== undefined && options.nakamotoHeight <= options.blocks
          ? options.nakamotoHeight
          : null,
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
      miners: this.ledger.miners.map((m, i) => ({
        address: m.address,
        vrfPublicKey: vrfPublicKey(this.ledger.vrfKey(i)).toString('hex'),
      })),
      sample: {
        busyAddress: this.ledger.address(0),
        tokenContract: '',
        nftContract: '',
        txId: '',
        blockHeight: 0,
      },
    };
  }

  // ---- output pipeline ---------------------------------------------------------------------------------

  private plan(plan: Plan) {
    this.plans.push(plan);
  }

  private readonly queued = new WeakSet<TxDraft>();

  /** Queues a draft for signing in the current chunk, unless already queued: before any message shows it. */
  private signLater(tx: TxDraft) {
    if (!tx.request || this.queued.has(tx)) return;
    this.queued.add(tx);
    this.chunkDrafts.push(tx);
  }

  private async flush(force: boolean) {
    if (force || this.chunkDrafts.length >= CHUNK_TXS) {
      const drafts = this.chunkDrafts;
      const plans = this.plans;
      this.chunkDrafts = [];
      this.plans = [];
      this.report.signedTxs += drafts.length;
      const signing = this.pool.sign(drafts.map((d) => d.request!)).then((signed) => {
        signed.forEach((s, i) => {
          drafts[i].txid = '0x' + s.txid.toString('hex');
          drafts[i].rawTx = '0x' + s.raw.toString('hex');
        });
      });
      this.inFlight.push({ signing, plans });
    }
    while (this.inFlight.length > (force ? 0 : MAX_IN_FLIGHT - 1)) {
      const { signing, plans } = this.inFlight.shift()!;
      await signing;
      for (const plan of plans) await this.write(plan);
    }
  }

  private async write(plan: Plan) {
    const payload = JSON.stringify(plan.payload());
    plan.observe?.();
    this.messageId++;
    this.report.paths[plan.path] = (this.report.paths[plan.path] ?? 0) + 1;
    await this.sink({ id: String(this.messageId), receivedAt: new Date(plan.at), path: plan.path, payload });
    if (plan.height !== undefined) {
      this.blocksWritten++;
      this.heightWritten = Math.max(this.heightWritten, plan.height);
      this.options.onProgress?.({
        height: this.heightWritten,
        blocks: this.blocksWritten,
        txs: this.txsWritten,
        messages: this.messageId,
      });
    }
  }

  // ---- chain pieces ---------------------------------------------------------------------------------------

  private burnTime(height: number): number {
    const jitter = derivedBytes(this.options.seed, `burn-time:${height}`)[0] % 120;
    return this.startTime + (height - START_BURN_HEIGHT) * BURN_INTERVAL + jitter;
  }

  private burnHash(height: number): string {
    const bytes = Buffer.from(derivedBytes(this.options.seed, `burn:${height}`));
    bytes.fill(0, 0, 8);
    return '0x' + bytes.toString('hex');
  }

  /** The consensus hash of the sortition at a burn height (what a block's index hash commits to). */
  private consensusHash(height: number): Buffer {
    return derivedBytes(this.options.seed, `consensus:${height}`, 20);
  }

  /** The next burn block, announced with `/new_burn_block`. */
  private burn(): BurnInfo {
    const height = ++this.burnHeight;
    const amount = this.random.int(10_000, 2_000_000);
    const info = { height, hash: this.burnHash(height), time: this.burnTime(height), amount };
    this.plan({
      at: info.time * 1000 + 1000,
      path: '/new_burn_block',
      payload: () =>
        this.modernNode
          ? this.burnBlockPayload(info)
          : {
              burn_block_hash: info.hash,
              burn_block_height: info.height,
              burn_amount: amount,
              reward_recipients: [],
              reward_slot_holders: [],
            },
    });
    return info;
  }

  /**
   * `/new_burn_block` as a 3.x node posts it. In a reward phase the block commits pay two reward slots of
   * the signer set's stackers (nothing is burnt); in a prepare phase they burn.
   */
  private burnBlockPayload(info: BurnInfo) {
    const amount = info.amount;
    const slots = this.signerSet.rewardedAddresses;
    const paid =
      preparedCycle(info.height) === null
        ? [0, 1].map((k) => slots[(2 * info.height + k) % slots.length])
        : [];
    return {
      burn_amount: paid.length > 0 ? 0 : amount,
      burn_block_hash: info.hash,
      burn_block_height: info.height,
      consensus_hash: '0x' + this.consensusHash(info.height).toString('hex'),
      parent_burn_block_hash: this.burnHash(info.height - 1),
      reward_recipients: paid.map((recipient) => ({ amt: Math.floor(amount / 2), recipient })),
      reward_slot_holders: paid,
    };
  }

  /**
   * The `reward_set` and `cycle_number` of a block whose burn height is `burnHeight`: the first block in a
   * prepare phase carries the reward set it computes for the next cycle; others carry nulls.
   */
  private rewardSetMembers(burnHeight: number) {
    const cycle = preparedCycle(burnHeight);
    if (cycle === null || this.announcedCycles.has(cycle)) return { reward_set: null, cycle_number: null };
    this.announcedCycles.add(cycle);
    return { reward_set: this.signerSet.rewardSetJson(), cycle_number: cycle };
  }

  /** The members every `/new_block` of a 3.x node has that a 2.x node's lack (epoch 2.x values). */
  private modernBlockMembers(info: BlockInfo) {
    return {
      block_time: null,
      consensus_hash: '0x' + info.consensusHash.toString('hex'),
      pox_v1_unlock_height: POX_UNLOCK_HEIGHTS.v1,
      pox_v2_unlock_height: POX_UNLOCK_HEIGHTS.v2,
      pox_v3_unlock_height: POX_UNLOCK_HEIGHTS.v3,
      signer_bitvec: null,
      tenure_height: info.tenureHeight,
    };
  }

  private take(max: number): TxDraft[] {
    const end = Math.min(this.fifo.length, this.fifoHead + Math.max(0, max));
    const out = this.fifo.slice(this.fifoHead, end);
    this.fifoHead = end;
    if (this.fifoHead > 4096 && this.fifoHead * 2 > this.fifo.length) {
      this.fifo = this.fifo.slice(this.fifoHead);
      this.fifoHead = 0;
    }
    return out;
  }

  private get fifoLength(): number {
    return this.fifo.length - this.fifoHead;
  }

  /** Txs the next block mines: about one interval's worth, more when the backlog grows past 1.5 of them. */
  private capacity(): number {
    const base = Math.round(this.txsPerBlock * (0.6 + 0.6 * this.random.float()));
    return Math.max(1, base + Math.max(0, this.fifoLength - Math.round(this.txsPerBlock * 1.5)));
  }

  /**
   * The reward that matures with the coinbase of tenure `tenureHeight` (in epoch 2.x every block has one, and
   * its tenure height is its height): that of the tenure `MINER_REWARD_MATURITY` earlier.
   */
  private maturedReward(tenureHeight: number): Reward | null {
    const reward = this.rewards.get(tenureHeight - MINER_REWARD_MATURITY);
    this.rewards.delete(tenureHeight - MINER_REWARD_MATURITY - 1);
    return reward ?? null;
  }

  /** `matured_miner_rewards` (read when the message is written: a Nakamoto block's hashes are known then). */
  private rewardsJson(reward: Reward | null) {
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

  /**
   * Plans a `/new_block`. `fate`: `canonical` (canonical when it arrives and stays so), `orphaned`
   * (canonical when it arrives, orphaned by a later reorg), `sibling` (arrives at the tip height, so not
   * canonical, and restored by the reorg its child triggers).
   */
  private block(args: {
    height: number;
    variant: number;
    parent: BlockInfo | null;
    burn: BurnInfo;
    miner: number;
    anchored: TxDraft[];
    confirmed: Stream | null;
    fate: 'canonical' | 'orphaned' | 'sibling';
    reorg?: { orphaned: TxDraft[]; restored: TxDraft[] };
  }): BlockInfo {
    const seed = this.options.seed;
    const blockHash = '0x' + derivedBytes(seed, `block:${args.height}:${args.variant}`).toString('hex');
    const consensusHash = this.consensusHash(args.burn.height);
    const info: BlockInfo = {
      height: args.height,
      blockHash,
      indexBlockHash:
        '0x' + sha512_256(Buffer.from(blockHash.slice(2), 'hex'), consensusHash).toString('hex'),
      burn: args.burn,
      time: args.burn.time,
      nakamoto: false,
      consensusHash,
      tenureHeight: args.height,
    };
    const placed: PlacedTx[] = [
      ...args.anchored.map((tx) => ({ tx, microblock: null })),
      ...(args.confirmed?.placed ?? []),
    ];
    const txs = placed.map((p) => p.tx);
    const reward = this.maturedReward(args.height);
    const rewardSet = this.modernNode ? this.rewardSetMembers(args.burn.height) : null;
    const parent = args.parent;
    const parentBurn = args.burn.height - 1;
    const minerTxid = '0x' + derivedBytes(seed, `miner-tx:${args.height}:${args.variant}`).toString('hex');
    const receivedAt = args.burn.time * 1000 + 20_000 + args.variant * 1000;
    this.plan({
      at: receivedAt,
      path: '/new_block',
      height: args.height,
      payload: () => {
        const payload = {
          block_hash: info.blockHash,
          block_height: info.height,
          index_block_hash: info.indexBlockHash,
          parent_block_hash: parent?.blockHash ?? ZERO_HASH,
          parent_index_block_hash:
            parent?.indexBlockHash ?? '0x' + derivedBytes(seed, 'genesis-parent').toString('hex'),
          parent_microblock: args.confirmed?.last.hash ?? ZERO_HASH,
          parent_microblock_sequence: args.confirmed?.last.sequence ?? 0,
          burn_block_hash: args.burn.hash,
          burn_block_height: args.burn.height,
          burn_block_time: args.burn.time,
          parent_burn_block_hash: this.burnHash(parentBurn),
          parent_burn_block_height: parentBurn,
          parent_burn_block_timestamp: this.burnTime(parentBurn),
          miner_txid: minerTxid,
          matured_miner_rewards: this.rewardsJson(reward),
          anchored_cost: sumCosts(args.anchored),
          confirmed_microblocks_cost: sumCosts(args.confirmed?.placed.map((p) => p.tx) ?? []),
        };
        if (!rewardSet) return { ...payload, ...transactionsAndEvents(placed) };
        return sortedKeys({
          ...payload,
          ...this.modernBlockMembers(info),
          ...rewardSet,
          ...transactionsAndEvents(placed, true),
        });
      },
      observe:
        args.fate === 'sibling'
          ? undefined
          : () => {
              this.txsWritten += txs.length;
              this.model.block(txs, args.height, Math.floor(receivedAt / 1000), args.reorg);
            },
    });
    for (const tx of txs) this.signLater(tx);
    if (args.fate !== 'orphaned') {
      const fees = args.anchored.reduce((sum, tx) => sum + BigInt(tx.fee), 0n);
      const miner = this.ledger.miners[args.miner].address;
      this.rewards.set(args.height, { miner, recipient: miner, fees, block: info });
      this.canonical(info, txs);
      this.report.tipIndexBlockHash = info.indexBlockHash;
    }
    return info;
  }

  /** A block canonical when it arrives, mined on top of the others (or restored by the next block). */
  private canonical(info: BlockInfo, txs: TxDraft[]) {
    this.count(txs);
    this.report.tipHeight = info.height;
    this.report.tipTenureHeight = info.tenureHeight;
    if (!this.ledger.contractsLive && this.deploys.length > 0) {
      // contracts are called once their deploys are mined
      this.deploys = this.deploys.filter((d) => !txs.includes(d));
      if (this.deploys.length === 0) this.ledger.contractsLive = true;
    }
  }

  private count(txs: TxDraft[]) {
    for (const tx of txs) {
      this.report.canonicalTxs++;
      const type = TX_TYPES[tx.kind];
      this.report.txTypes[type] = (this.report.txTypes[type] ?? 0) + 1;
      if (tx.status !== 'success') {
        this.report.failedTxs++;
        continue;
      }
      for (const e of tx.events) this.report.events[e.type] = (this.report.events[e.type] ?? 0) + 1;
      if (!this.sampleTx && tx.kind === 'ft_transfer') this.sampleTx = tx;
    }
  }

  /** A microblock stream on top of `parent`, confirmed by the next block. */
  private microblocks(parent: BlockInfo) {
    const want = this.random.int(2, 6);
    while (this.fifoLength < want) {
      const tx = this.userTx(parent.burn.height);
      if (!tx) break;
      this.fifo.push(tx);
      this.signLater(tx);
    }
    const txs = this.take(want);
    if (txs.length === 0) return;
    const count = txs.length >= 4 ? 2 : 1;
    const placed: PlacedTx[] = [];
    let parentHash = parent.blockHash;
    let last: MicroblockPlacement | null = null;
    const perBlock = Math.ceil(txs.length / count);
    for (let seq = 0; seq < count; seq++) {
      const hash =
        '0x' + derivedBytes(this.options.seed, `microblock:${parent.height}:${seq}`).toString('hex');
      last = { hash, sequence: seq, parentHash };
      for (const tx of txs.slice(seq * perBlock, (seq + 1) * perBlock)) placed.push({ tx, microblock: last });
      parentHash = hash;
    }
    this.stream = { placed, last: last! };
    this.report.microblocks += count;
    this.report.microblockTxs += txs.length;
    const at = parent.burn.time * 1000 + 120_000;
    this.plan({
      at,
      path: '/new_microblocks',
      payload: () => {
        const payload = {
          parent_index_block_hash: parent.indexBlockHash,
          burn_block_hash: parent.burn.hash,
          burn_block_height: parent.burn.height,
          burn_block_timestamp: parent.burn.time,
          ...transactionsAndEvents(placed, this.modernNode, true),
        };
        return this.modernNode ? sortedKeys(payload) : payload;
      },
      observe: () => this.model.microblock(txs),
    });
    for (const tx of txs) this.signLater(tx);
  }

  private userTx(burnHeight: number): TxDraft | null {
    const l = this.ledger;
    let kind: UserKind = 'stx';
    if (l.contractsLive && this.showcase.length > 0) kind = this.showcase.shift()!;
    else if (l.contractsLive) {
      const r = this.random.float();
      kind =
        r < 0.45
          ? 'stx'
          : r < 0.62
            ? 'ft_transfer'
            : r < 0.635
              ? 'ft_fail'
              : r < 0.655
                ? 'ft_mint'
                : r < 0.675
                  ? 'ft_burn'
                  : r < 0.775
                    ? 'nft_mint'
                    : r < 0.875
                      ? 'nft_transfer'
                      : r < 0.885
                        ? 'nft_fail'
                        : r < 0.905
                          ? 'nft_burn'
                          : r < 0.908
                            ? 'stack_stx'
                            : r < 0.909
                              ? 'deploy'
                              : 'stx';
    }
    let tx: TxDraft | null;
    switch (kind) {
      case 'stx':
        tx = l.stxTransfer(burnHeight);
        break;
      case 'sponsored':
        tx = l.stxTransfer(burnHeight, { sponsored: true });
        break;
      case 'memo':
        tx = l.stxTransfer(burnHeight, { memo: true, sponsored: false });
        break;
      case 'ft_transfer':
        tx = l.ftTransfer(burnHeight);
        break;
      case 'ft_fail':
        tx = l.ftTransfer(burnHeight, true);
        break;
      case 'ft_mint':
        tx = l.ftMint(burnHeight);
        break;
      case 'ft_burn':
        tx = l.ftBurn(burnHeight);
        break;
      case 'nft_mint':
        tx = l.nftMint(burnHeight);
        break;
      case 'nft_transfer':
        tx = l.nftTransfer(burnHeight);
        break;
      case 'nft_fail':
        tx = l.nftTransfer(burnHeight, true);
        break;
      case 'nft_burn':
        tx = l.nftBurn(burnHeight);
        break;
      case 'stack_stx':
        tx = l.stackStx(burnHeight, this.showcase.length === SHOWCASE.length - 1 ? 1 : undefined);
        break;
      case 'deploy':
        tx = l.deploy(this.random.chance(0.5) ? 'ft' : 'nft');
        break;
    }
    return tx ?? l.stxTransfer(burnHeight);
  }

  /**
   * Drafts the txs of one block interval and plans the mempool messages the node sends meanwhile:
   * announcements, a replace-by-fee now and then, txs stuck on a nonce gap, and stale drops. `burnHeight`:
   * that of the block to come (for STX locks).
   */
  private interval(height: number, burnHeight = this.burnHeight + 1) {
    // messages follow the tip: a minute after an epoch 2.x block, a second after a Nakamoto one (the next
    // comes seconds later), a few hundred milliseconds apart
    const nakamoto = this.tip?.nakamoto ?? false;
    const tipTime = (this.tip?.time ?? this.startTime) * 1000;
    const step = nakamoto ? 250 : 1000;
    const created: TxDraft[] = [];
    if (height === 2) {
      this.deploys = [this.ledger.deploy('ft'), this.ledger.deploy('nft')];
      created.push(...this.deploys);
      this.report.sample.tokenContract = `${this.ledger.token!.id}`;
      this.report.sample.nftContract = `${this.ledger.collection!.id}`;
    }
    const n = Math.round(this.txsPerBlock * (0.6 + 0.8 * this.random.float()));
    for (let i = 0; i < n; i++) {
      const tx = this.userTx(burnHeight);
      if (tx) created.push(tx);
    }
    this.fifo.push(...created);
    for (const tx of created) this.signLater(tx);

    const announced = created.filter(() => this.random.chance(0.5));
    const later: TxDraft[] = [];
    let replaced: { original: TxDraft; replacement: TxDraft } | null = null;
    if (height >= 3 && this.random.chance(height === 3 ? 1 : 0.12)) {
      const replacement = created.find(
        (tx) => tx.kind === 'stx_transfer' && tx.request!.sponsor < 0 && !announced.includes(tx),
      );
      if (replacement) {
        replaced = { original: this.ledger.replacedVersion(replacement), replacement };
        announced.push(replaced.original);
        later.push(replacement);
      }
    }
    if (height >= 3 && this.random.chance(height === 3 ? 1 : 0.1)) {
      const tx = this.ledger.stuckTransfer();
      announced.push(tx);
      this.stuck.push({ tx, dropAt: height + this.random.int(20, 40) });
    }
    const stale = this.stuck.filter((s) => s.dropAt <= height).map((s) => s.tx);
    this.stuck = this.stuck.filter((s) => s.dropAt > height);

    let at = tipTime + (nakamoto ? 750 : 60_000);
    if (announced.length > 0) this.mempoolMessage(announced, (at += step));
    if (replaced) {
      this.mempoolMessage(later, (at += step));
      this.dropMessage([replaced.original], 'ReplaceByFee', replaced.replacement, (at += step));
    }
    if (stale.length > 0) this.dropMessage(stale, 'StaleGarbageCollect', null, (at += step));
  }

  private mempoolMessage(txs: TxDraft[], at: number) {
    this.plan({
      at,
      path: '/new_mempool_tx',
      payload: () => txs.map((tx) => tx.rawTx),
      observe: () => this.model.receive(txs, Math.floor(at / 1000)),
    });
    for (const tx of txs) this.signLater(tx);
  }

  private dropMessage(txs: TxDraft[], reason: string, replacement: TxDraft | null, at: number) {
    this.plan({
      at,
      path: '/drop_mempool_tx',
      payload: () => ({
        dropped_txids: txs.map((tx) => tx.txid),
        reason,
        new_txid: replacement?.txid ?? null,
      }),
      observe: () => this.model.drop(txs.map((tx) => tx.txid)),
    });
  }

  private pickMiner(not = -1): number {
    for (;;) {
      const m = this.random.int(0, MINERS - 1);
      if (m !== not) return m;
    }
  }

  /** Block 1: a coinbase and the genesis mints. */
  private genesisBlock() {
    this.burn();
    this.burn();
    const burn = this.burn();
    const miner = this.pickMiner();
    this.tip = this.block({
      height: 1,
      variant: 0,
      parent: null,
      burn,
      miner,
      anchored: [this.ledger.coinbase(miner, '1:0'), this.ledger.genesis()],
      confirmed: null,
      fate: 'canonical',
    });
  }

  private normalBlock(height: number) {
    this.interval(height);
    if (this.random.chance(0.05)) this.burn(); // a sortition without a Stacks block
    const burn = this.burn();
    const miner = this.pickMiner();
    const coinbase = this.ledger.coinbase(miner, `${height}:0`);
    const confirmed = this.stream;
    this.stream = null;
    this.tip = this.block({
      height,
      variant: 0,
      parent: this.tip,
      burn,
      miner,
      anchored: [coinbase, ...this.take(this.capacity())],
      confirmed,
      fate: 'canonical',
    });
    const n = this.epoch2Tip;
    const mayStream = height < n && !this.forkHeights.has(height + 1) && !this.forkHeights.has(height);
    if (mayStream && (this.streamHeights.has(height) || this.random.chance(0.04))) this.microblocks(this.tip);
  }

  /**
   * A short fork at `height`: block B arrives and becomes the tip; sibling B' (another miner, at the same
   * height) arrives next and is stored non-canonical; then C' on B' arrives one higher, so B' wins and B is
   * orphaned. B mined part of B''s txs and the first tx of C', plus its own coinbase, which only the
   * orphaned fork has.
   */
  private fork(height: number) {
    const parent = this.tip;
    this.interval(height);
    const burnB = this.burn();
    const minerB = this.pickMiner();
    const minerB2 = this.pickMiner(minerB);
    const coinbaseB2 = this.ledger.coinbase(minerB2, `${height}:1`);
    const txsB2 = [coinbaseB2, ...this.take(Math.min(this.capacity(), Math.max(0, this.fifoLength - 1)))];
    const coinbaseB = this.ledger.coinbase(minerB, `${height}:0`, false);
    const nextForC = this.fifoLength > 0 ? [this.fifo[this.fifoHead]] : [];
    const userB2 = txsB2.slice(1);
    const txsB = [coinbaseB, ...userB2.slice(0, Math.ceil(userB2.length / 2)), ...nextForC];
    const b = this.block({
      height,
      variant: 0,
      parent,
      burn: burnB,
      miner: minerB,
      anchored: txsB,
      confirmed: null,
      fate: 'orphaned',
    });
    this.tip = b;
    const burnB2 = this.burn();
    const b2 = this.block({
      height,
      variant: 1,
      parent,
      burn: burnB2,
      miner: minerB2,
      anchored: txsB2,
      confirmed: null,
      fate: 'sibling',
    });
    this.tip = b2;
    this.interval(height + 1);
    const burnC = this.burn();
    const minerC = this.pickMiner();
    this.tip = this.block({
      height: height + 1,
      variant: 1,
      parent: b2,
      burn: burnC,
      miner: minerC,
      anchored: [this.ledger.coinbase(minerC, `${height + 1}:1`), ...this.take(this.capacity())],
      confirmed: null,
      fate: 'canonical',
      reorg: { orphaned: [coinbaseB, ...nextForC], restored: txsB2 },
    });
    this.report.reorgs++;
    this.report.orphanedTxs++;
  }

  // ---- Nakamoto ---------------------------------------------------------------------------------------------

  /**
   * A sortition elects a miner: its tenure opens with a tenure change (block found) naming the tenure it
   * follows, and a Nakamoto coinbase proving the election with the miner's VRF key. (The node proves over the
   * sortition's hash, which no message carries; here the burn block hash stands for it, so anyone can check
   * a proof against the miner's VRF key.)
   */
  private startTenure(burn: BurnInfo): TenureOpening {
    const parent = this.tip!;
    const previousBlocks = this.tenure?.blocks ?? 1; // an epoch 2.x tenure is one block
    const miner = this.pickMiner();
    const consensusHash = this.consensusHash(burn.height);
    const tenureHeight = ++this.tenureHeight;
    const change = this.ledger.tenureChange(miner, {
      tenureConsensusHash: consensusHash,
      prevTenureConsensusHash: parent.consensusHash,
      burnViewConsensusHash: consensusHash,
      previousTenureBlocks: previousBlocks,
      cause: TenureChangeCause.BlockFound,
    });
    const altRecipient = this.random.chance(ALT_RECIPIENT) ? this.ledger.users[this.ledger.busy()] : null;
    const coinbase = this.ledger.nakamotoCoinbase(
      miner,
      `tenure:${tenureHeight}`,
      Buffer.from(burn.hash.slice(2), 'hex'),
      altRecipient?.principal ?? null,
    );
    const minerAddress = this.ledger.miners[miner].address;
    this.tenure = {
      miner,
      burn,
      consensusHash,
      tenureHeight,
      minerTxid: '0x' + derivedBytes(this.options.seed, `miner-tx:${burn.height}`).toString('hex'),
      burnSpent: burn.amount,
      blocks: 0,
      reward: {
        miner: minerAddress,
        recipient: altRecipient?.address ?? minerAddress,
        fees: 0n,
        block: parent,
      },
    };
    this.report.tenures++;
    return { change, coinbase };
  }

  /** A burn block without a winner: the miner extends its tenure (same consensus hash, a new burn view). */
  private extendTenure(burn: BurnInfo): TenureOpening {
    const tenure = this.tenure!;
    const change = this.ledger.tenureChange(tenure.miner, {
      tenureConsensusHash: tenure.consensusHash,
      prevTenureConsensusHash: tenure.consensusHash,
      burnViewConsensusHash: this.consensusHash(burn.height),
      previousTenureBlocks: tenure.blocks,
      cause: TenureChangeCause.Extended,
    });
    this.report.tenureExtends++;
    return { change, coinbase: null };
  }

  /**
   * A Nakamoto block of the current tenure at `time`; the first after a sortition (or an empty one) opens
   * with the tenure change (and the coinbase).
   */
  private nakamotoBlock(height: number, time: number, opening: TenureOpening | null) {
    const tenure = this.tenure!;
    const parent = this.tip!;
    const lead = opening ? [opening.change.draft, ...(opening.coinbase ? [opening.coinbase] : [])] : [];
    const user = this.take(this.capacity());
    if (lead.length === 0 && user.length === 0) {
      // a miner does not propose an empty block: this one mines a tx it was just sent
      const tx = this.userTx(this.burnHeight);
      if (tx) user.push(tx);
    }
    const txs = [...lead, ...user];
    const info: BlockInfo = {
      height,
      blockHash: '',
      indexBlockHash: '',
      burn: tenure.burn,
      time,
      nakamoto: true,
      consensusHash: tenure.consensusHash,
      tenureHeight: tenure.tenureHeight,
    };
    const opensTenure = tenure.blocks === 0;
    const reward = opensTenure ? this.maturedReward(tenure.tenureHeight) : null;
    if (opensTenure) {
      tenure.reward.block = info;
      this.rewards.set(tenure.tenureHeight, tenure.reward);
    }
    for (const tx of user) tenure.reward.fees += BigInt(tx.fee);
    tenure.blocks++;
    const rewardSet = this.rewardSetMembers(tenure.burn.height);
    const receivedAt = time * 1000 + 500;
    this.plan({
      at: receivedAt,
      path: '/new_block',
      height,
      payload: () => {
        opening?.change.seal(Buffer.from(parent.indexBlockHash.slice(2), 'hex'));
        const signed = this.signBlock(info, parent, tenure, txs);
        if (height === this.report.tipHeight) this.report.tipIndexBlockHash = info.indexBlockHash;
        return sortedKeys({
          ...this.modernBlockMembers(info),
          ...rewardSet,
          ...transactionsAndEvents(
            txs.map((tx) => ({ tx, microblock: null })),
            true,
          ),
          anchored_cost: sumCosts(txs),
          block_hash: info.blockHash,
          block_height: height,
          block_time: time,
          burn_block_hash: tenure.burn.hash,
          burn_block_height: tenure.burn.height,
          burn_block_time: tenure.burn.time,
          confirmed_microblocks_cost: sumCosts([]),
          index_block_hash: info.indexBlockHash,
          matured_miner_rewards: this.rewardsJson(reward),
          miner_signature: '0x' + signed.minerSignature.toString('hex'),
          miner_txid: tenure.minerTxid,
          parent_block_hash: parent.blockHash,
          parent_burn_block_hash: parent.burn.hash,
          parent_burn_block_height: parent.burn.height,
          parent_burn_block_timestamp: parent.burn.time,
          parent_index_block_hash: parent.indexBlockHash,
          parent_microblock: ZERO_HASH,
          parent_microblock_sequence: 0,
          signer_bitvec: signed.poxTreatment.toString('hex'),
          signer_signature: signed.signerSignatures.map((sig) => sig.toString('hex')),
          signer_signature_hash: info.blockHash,
        });
      },
      observe: () => {
        this.txsWritten += txs.length;
        this.model.block(txs, height, Math.floor(receivedAt / 1000), undefined, true);
      },
    });
    for (const tx of txs) this.signLater(tx);
    this.canonical(info, txs);
    this.tip = info;
  }

  /**
   * Builds the block's header (its tx ids are known now), has the miner sign it and the signers sign its
   * hash, and sets the block's hashes.
   */
  private signBlock(info: BlockInfo, parent: BlockInfo, tenure: Tenure, txs: TxDraft[]) {
    const seed = this.options.seed;
    const hex = (s: string) => Buffer.from(s.slice(2), 'hex');
    const miner = this.ledger.miners[tenure.miner];
    const absent = derivedBytes(seed, `absent-signers:${info.height}`);
    const sealed = sealNakamotoBlock(
      {
        chainLength: info.height,
        burnSpent: tenure.burnSpent,
        consensusHash: tenure.consensusHash,
        parentBlockId: hex(parent.indexBlockHash),
        txids: txs.map((tx) => hex(tx.txid)),
        stateIndexRoot: derivedBytes(seed, `state-root:${info.height}`),
        timestamp: info.time,
      },
      this.ledger.keys.privateKeys[miner.key],
      this.signerSet,
      (i) => absent[i] < 256 * SIGNER_ABSENT,
    );
    info.blockHash = '0x' + sealed.blockHash.toString('hex');
    info.indexBlockHash = '0x' + sealed.indexBlockHash.toString('hex');
    return sealed;
  }

  /**
   * Epoch 3.0: per burn block, a tenure of a few blocks seconds apart (or, without a sortition winner, the
   * current tenure extended), until the tip height.
   */
  private async nakamotoEra() {
    this.tenureHeight = this.tip!.tenureHeight;
    let height = this.epoch2Tip + 1;
    while (height <= this.options.blocks) {
      const extend = this.tenure !== null && this.random.chance(EMPTY_SORTITION);
      const count = Math.min(
        this.random.int(TENURE_BLOCKS.min, TENURE_BLOCKS.max),
        this.options.blocks - height + 1,
      );
      this.interval(height);
      const burn = this.burn();
      const opening = extend ? this.extendTenure(burn) : this.startTenure(burn);
      let time = burn.time + this.random.int(8, 20);
      for (let i = 0; i < count; i++, height++) {
        if (i > 0) this.interval(height, this.burnHeight);
        this.nakamotoBlock(height, time, i === 0 ? opening : null);
        time += this.random.int(BLOCK_SPACING.min, BLOCK_SPACING.max);
        await this.flush(false);
      }
    }
  }

  async run(): Promise<GenerateReport> {
    const started = performance.now();
    try {
      this.genesisBlock();
      await this.flush(false);
      for (let height = 2; height <= this.epoch2Tip; height++) {
        if (this.forkHeights.has(height) && height < this.epoch2Tip) {
          this.fork(height);
          height++;
        } else {
          this.normalBlock(height);
        }
        await this.flush(false);
      }
      await this.nakamotoEra();
      await this.flush(true);
    } finally {
      await this.pool.close();
    }
    this.report.sample.txId = this.sampleTx?.txid ?? '';
    this.report.sample.blockHeight = Math.max(1, Math.floor(this.report.tipHeight * 0.7));
    this.report.messages = this.messageId;
    this.report.mempoolPending = this.model.size;
    this.report.seconds = (performance.now() - started) / 1000;
    this.report.signedTxsPerSecond = Math.round(this.report.signedTxs / Math.max(this.report.seconds, 1e-9));
    return this.report;
  }
}

/**
 * Where the demo chain, the bench chains and `generate` enter Nakamoto: after 40% of the chain in epoch 2.x
 * (which shows its microblocks and forks), so the rest has the shape of today's chain.
 */
export function defaultNakamotoHeight(blocks: number): number {
  return Math.floor(blocks * 0.4) + 1;
}

/** Generates the chain, handing each message to `sink` in order. */
export function generateChain(options: GenerateOptions, sink: MessageSink): Promise<GenerateReport> {
  if (!Number.isInteger(options.blocks) || options.blocks < 1)
    throw new Error('blocks must be an integer >= 1');
  if (!Number.isInteger(options.accounts) || options.accounts < 8) {
    throw new Error('accounts must be an integer >= 8');
  }
  const { nakamotoHeight } = options;
  if (nakamotoHeight !== undefined && (!Number.isInteger(nakamotoHeight) || nakamotoHeight < 2)) {
    throw new Error('nakamotoHeight must be an integer >= 2 (block 1 holds the genesis mints)');
  }
  return new Planner(options, sink).run();
}

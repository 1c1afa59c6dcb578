import { availableParallelism } from 'node:os';
import type { RecordedMessage } from '../protocol/tsv.js';
import type { TxDraft } from './drafts.js';
import { sumCosts, transactionsAndEvents, type MicroblockPlacement, type PlacedTx } from './format.js';
import { MempoolModel } from './mempool-model.js';
import { Random, derivedBytes } from './random.js';
import { sha512_256 } from './signer.js';
import { SignerPool } from './signer-pool.js';
import { Ledger } from './simulation.js';

// The demo-chain generator: a deterministic Stacks 2.x event stream, as a stacks-node would post it to an
// event observer, with really signed transactions. Per block interval it drafts user transactions (applied
// to a ledger in mining order, so balances, nonces and events stay consistent), announces some of them to
// the mempool, and mines them first-in first-out, so the mempool holds txs across blocks. Around that:
// burn blocks, coinbases and matured miner rewards, microblock streams confirmed by the next block, short
// forks ("higher wins" reorgs), replace-by-fee and stale drops.
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
   * the indexer's mempool garbage-collection age in blocks, so `mempoolPending` counts what the indexer
   * keeps (store/write/mempool.ts); without it the report counts what the node keeps
   */
  mempoolGcBlocks?: number;
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
  /** every message written, by path */
  messages: number;
  paths: Record<string, number>;
  /** distinct txs mined on the canonical chain (anchored blocks, incl. confirmed microblock txs) */
  canonicalTxs: number;
  /** of which failed (abort_by_response) */
  failedTxs: number;
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
}

interface BlockInfo {
  height: number;
  blockHash: string;
  indexBlockHash: string;
  burn: BurnInfo;
}

interface Reward {
  miner: string;
  fees: bigint;
  block: BlockInfo;
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
    this.model = new MempoolModel(options.mempoolGcBlocks);
    const n = options.blocks;
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
      messages: 0,
      paths: {},
      canonicalTxs: 0,
      failedTxs: 0,
      orphanedTxs: 0,
      reorgs: 0,
      microblocks: 0,
      microblockTxs: 0,
      mempoolPending: 0,
      events: {},
      signedTxs: 0,
      seconds: 0,
      signedTxsPerSecond: 0,
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

  /** The next burn block, announced with `/new_burn_block`. */
  private burn(): BurnInfo {
    const height = ++this.burnHeight;
    const info = { height, hash: this.burnHash(height), time: this.burnTime(height) };
    const amount = this.random.int(10_000, 2_000_000);
    this.plan({
      at: info.time * 1000 + 1000,
      path: '/new_burn_block',
      payload: () => ({
        burn_block_hash: info.hash,
        burn_block_height: info.height,
        burn_amount: amount,
        reward_recipients: [],
        reward_slot_holders: [],
      }),
    });
    return info;
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

  private maturedRewards(height: number) {
    const reward = this.rewards.get(height - MINER_REWARD_MATURITY);
    this.rewards.delete(height - MINER_REWARD_MATURITY - 1);
    if (!reward) return [];
    return [
      {
        recipient: reward.miner,
        miner_address: reward.miner,
        coinbase_amount: COINBASE_USTX,
        tx_fees_anchored: reward.fees.toString(),
        tx_fees_streamed_confirmed: '0',
        tx_fees_streamed_produced: '0',
        from_stacks_block_hash: reward.block.blockHash,
        from_index_consensus_hash: reward.block.indexBlockHash,
      },
    ];
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
    const consensusHash = derivedBytes(seed, `consensus:${args.burn.height}`, 20);
    const info: BlockInfo = {
      height: args.height,
      blockHash,
      indexBlockHash:
        '0x' + sha512_256(Buffer.from(blockHash.slice(2), 'hex'), consensusHash).toString('hex'),
      burn: args.burn,
    };
    const placed: PlacedTx[] = [
      ...args.anchored.map((tx) => ({ tx, microblock: null })),
      ...(args.confirmed?.placed ?? []),
    ];
    const txs = placed.map((p) => p.tx);
    const rewards = this.maturedRewards(args.height);
    const parent = args.parent;
    const parentBurn = args.burn.height - 1;
    const minerTxid = '0x' + derivedBytes(seed, `miner-tx:${args.height}:${args.variant}`).toString('hex');
    const receivedAt = args.burn.time * 1000 + 20_000 + args.variant * 1000;
    this.plan({
      at: receivedAt,
      path: '/new_block',
      height: args.height,
      payload: () => ({
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
        matured_miner_rewards: rewards,
        anchored_cost: sumCosts(args.anchored),
        confirmed_microblocks_cost: sumCosts(args.confirmed?.placed.map((p) => p.tx) ?? []),
        ...transactionsAndEvents(placed),
      }),
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
      this.rewards.set(args.height, { miner: this.ledger.miners[args.miner].address, fees, block: info });
      this.count(txs);
      this.report.tipHeight = Math.max(this.report.tipHeight, args.height);
      if (args.height === this.report.tipHeight) this.report.tipIndexBlockHash = info.indexBlockHash;
      if (!this.ledger.contractsLive && this.deploys.length > 0) {
        // contracts are called once their deploys are mined
        this.deploys = this.deploys.filter((d) => !txs.includes(d));
        if (this.deploys.length === 0) this.ledger.contractsLive = true;
      }
    }
    return info;
  }

  private count(txs: TxDraft[]) {
    for (const tx of txs) {
      this.report.canonicalTxs++;
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
      payload: () => ({
        parent_index_block_hash: parent.indexBlockHash,
        burn_block_hash: parent.burn.hash,
        burn_block_height: parent.burn.height,
        burn_block_timestamp: parent.burn.time,
        ...transactionsAndEvents(placed),
      }),
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
   * announcements, a replace-by-fee now and then, txs stuck on a nonce gap, and stale drops.
   */
  private interval(height: number) {
    const burnHeight = this.burnHeight + 1;
    const tipTime = (this.tip?.burn.time ?? this.startTime) * 1000;
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

    let at = tipTime + 60_000;
    if (announced.length > 0) this.mempoolMessage(announced, (at += 1000));
    if (replaced) {
      this.mempoolMessage(later, (at += 1000));
      this.dropMessage([replaced.original], 'ReplaceByFee', replaced.replacement, (at += 1000));
    }
    if (stale.length > 0) this.dropMessage(stale, 'StaleGarbageCollect', null, (at += 1000));
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
    const n = this.options.blocks;
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

  async run(): Promise<GenerateReport> {
    const started = performance.now();
    try {
      this.genesisBlock();
      await this.flush(false);
      for (let height = 2; height <= this.options.blocks; height++) {
        if (this.forkHeights.has(height) && height < this.options.blocks) {
          this.fork(height);
          height++;
        } else {
          this.normalBlock(height);
        }
        await this.flush(false);
      }
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

/** Generates the chain, handing each message to `sink` in order. */
export function generateChain(options: GenerateOptions, sink: MessageSink): Promise<GenerateReport> {
  if (!Number.isInteger(options.blocks) || options.blocks < 1)
    throw new Error('blocks must be an integer >= 1');
  if (!Number.isInteger(options.accounts) || options.accounts < 8) {
    throw new Error('accounts must be an integer >= 8');
  }
  return new Planner(options, sink).run();
}

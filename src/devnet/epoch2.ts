import {
  epoch2BlockPayload,
  microblocksPayload,
  ZERO_HASH,
  type Microblock,
  type MicroblockStream,
  type PlacedTx,
  type StacksBlock,
} from './block-messages.js';
import { consensusHash, type BurnBlock } from './burnchain.js';
import type { Devnet } from './devnet.js';
import type { TxDraft } from './drafts.js';
import { derivedBytes } from './random.js';
import { sha512_256 } from './signer.js';

// Epoch 2.x: one Stacks block per burn block, each with its miner's coinbase and the txs waiting longest;
// now and then a microblock stream the next block confirms, and short forks ("higher wins") at set heights.

/**
 * How a block fares: `canonical` when it arrives and stays so; `orphaned`, canonical when it arrives and
 * orphaned by a later reorg; `sibling`, arrives at the tip height, so not canonical, and restored by the
 * reorg its child triggers.
 */
type Fate = 'canonical' | 'orphaned' | 'sibling';

interface PlannedBlock {
  height: number;
  /** 0, or 1 for the second block at a fork's height and its child */
  variant: number;
  parent: StacksBlock | null;
  burn: BurnBlock;
  miner: number;
  anchored: TxDraft[];
  confirmed: MicroblockStream | null;
  fate: Fate;
  /** the txs a reorg this block triggers orphans and restores */
  reorg?: { orphaned: TxDraft[]; restored: TxDraft[] };
}

export class Epoch2Blocks {
  /** heights where a fork starts (its block and the next are mined by `fork`) */
  readonly forkHeights = new Set<number>();
  /** heights after which a microblock stream always follows */
  private readonly streamHeights = new Set<number>();
  /** the stream the next block confirms */
  private stream: MicroblockStream | null = null;

  constructor(private readonly net: Devnet) {
    const n = net.epoch2Tip;
    if (n >= 12) this.forkHeights.add(Math.floor(n * 0.6));
    if (n >= 60) this.forkHeights.add(Math.floor(n * 0.3));
    // one microblock stream is always there (when the chain is long enough to confirm it)
    if (n >= 6) {
      let h = Math.max(3, Math.floor(n * 0.45));
      while (this.forkHeights.has(h) || this.forkHeights.has(h + 1) || this.forkHeights.has(h - 1)) h++;
      if (h < n) this.streamHeights.add(h);
    }
  }

  /** Block 1: a coinbase and the genesis mints. */
  genesis() {
    const net = this.net;
    net.burnchain.next();
    net.burnchain.next();
    const burn = net.burnchain.next();
    const miner = net.pickMiner();
    net.tip = this.block({
      height: 1,
      variant: 0,
      parent: null,
      burn,
      miner,
      anchored: [net.ledger.coinbase(miner, '1:0'), net.ledger.genesis()],
      confirmed: null,
      fate: 'canonical',
    });
  }

  /** The block at `height`, and after it now and then a microblock stream. */
  next(height: number) {
    const net = this.net;
    net.interval(height);
    if (net.random.chance(0.05)) net.burnchain.next(); // a sortition without a Stacks block
    const burn = net.burnchain.next();
    const miner = net.pickMiner();
    const coinbase = net.ledger.coinbase(miner, `${height}:0`);
    const confirmed = this.stream;
    this.stream = null;
    net.tip = this.block({
      height,
      variant: 0,
      parent: net.tip,
      burn,
      miner,
      anchored: [coinbase, ...net.queue.take(net.queue.blockCapacity())],
      confirmed,
      fate: 'canonical',
    });
    const n = net.epoch2Tip;
    const mayStream = height < n && !this.forkHeights.has(height + 1) && !this.forkHeights.has(height);
    if (mayStream && (this.streamHeights.has(height) || net.random.chance(0.04))) this.microblocks(net.tip);
  }

  /**
   * A short fork at `height`: block B arrives and becomes the tip; sibling B' (another miner, at the same
   * height) arrives next and is stored non-canonical; then C' on B' arrives one higher, so B' wins and B is
   * orphaned. B mined part of B''s txs and the first tx of C', plus its own coinbase, which only the
   * orphaned fork has.
   */
  fork(height: number) {
    const net = this.net;
    const { ledger, queue } = net;
    const parent = net.tip;
    net.interval(height);
    const burnB = net.burnchain.next();
    const minerB = net.pickMiner();
    const minerB2 = net.pickMiner(minerB);
    const coinbaseB2 = ledger.coinbase(minerB2, `${height}:1`);
    const txsB2 = [coinbaseB2, ...queue.take(Math.min(queue.blockCapacity(), Math.max(0, queue.length - 1)))];
    const coinbaseB = ledger.coinbase(minerB, `${height}:0`, false);
    const nextForC = queue.length > 0 ? [queue.peek()!] : [];
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
    net.tip = b;
    const burnB2 = net.burnchain.next();
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
    net.tip = b2;
    net.interval(height + 1);
    const burnC = net.burnchain.next();
    const minerC = net.pickMiner();
    net.tip = this.block({
      height: height + 1,
      variant: 1,
      parent: b2,
      burn: burnC,
      miner: minerC,
      anchored: [ledger.coinbase(minerC, `${height + 1}:1`), ...queue.take(queue.blockCapacity())],
      confirmed: null,
      fate: 'canonical',
      reorg: { orphaned: [coinbaseB, ...nextForC], restored: txsB2 },
    });
    net.report.reorgs++;
    net.report.orphanedTxs++;
  }

  /** Plans the `/new_block` of an epoch 2.x block; returns the block. */
  private block(planned: PlannedBlock): StacksBlock {
    const net = this.net;
    const { seed } = net;
    const { height, variant, parent, burn, anchored, confirmed } = planned;
    const blockHash = '0x' + derivedBytes(seed, `block:${height}:${variant}`).toString('hex');
    const blockConsensusHash = consensusHash(seed, burn.height);
    const block: StacksBlock = {
      height,
      blockHash,
      indexBlockHash:
        '0x' + sha512_256(Buffer.from(blockHash.slice(2), 'hex'), blockConsensusHash).toString('hex'),
      burn,
      time: burn.time,
      nakamoto: false,
      consensusHash: blockConsensusHash,
      tenureHeight: height,
    };
    const txs = [...anchored, ...(confirmed?.placed.map((p) => p.tx) ?? [])];
    const reward = net.rewards.matured(height);
    const rewardSet = net.modernNode ? net.rewardSets.members(burn.height) : null;
    const parentBurn = burn.height - 1;
    const minerTxid = '0x' + derivedBytes(seed, `miner-tx:${height}:${variant}`).toString('hex');
    const receivedAt = burn.time * 1000 + 20_000 + variant * 1000;
    const sibling = planned.fate === 'sibling';
    net.emitter.plan({
      at: receivedAt,
      path: '/new_block',
      block: { height, txs: sibling ? 0 : txs.length },
      payload: () =>
        epoch2BlockPayload({
          block,
          parentBlockHash: parent?.blockHash ?? ZERO_HASH,
          parentIndexBlockHash:
            parent?.indexBlockHash ?? '0x' + derivedBytes(seed, 'genesis-parent').toString('hex'),
          parentBurn: {
            hash: net.burnchain.hash(parentBurn),
            height: parentBurn,
            time: net.burnchain.time(parentBurn),
          },
          minerTxid,
          maturedMinerRewards: net.rewards.json(reward),
          anchored,
          confirmed,
          rewardSet,
        }),
      // a sibling's txs reach the mempool model with the block that restores it
      onWrite: sibling
        ? undefined
        : () => net.mempool.block(txs, height, Math.floor(receivedAt / 1000), planned.reorg),
    });
    for (const tx of txs) net.emitter.queueSigning(tx);
    if (planned.fate !== 'orphaned') {
      const fees = anchored.reduce((sum, tx) => sum + BigInt(tx.fee), 0n);
      const miner = net.ledger.miners[planned.miner].address;
      net.rewards.record(height, { miner, recipient: miner, fees, block });
      net.canonical(block, txs);
      net.report.tipIndexBlockHash = block.indexBlockHash;
    }
    return block;
  }

  /** A microblock stream on top of `parent`, confirmed by the next block. */
  private microblocks(parent: StacksBlock) {
    const net = this.net;
    const want = net.random.int(2, 6);
    while (net.queue.length < want) {
      const tx = net.mix.next(parent.burn.height);
      if (!tx) break;
      net.queue.push([tx]);
      net.emitter.queueSigning(tx);
    }
    const txs = net.queue.take(want);
    if (txs.length === 0) return;
    const count = txs.length >= 4 ? 2 : 1;
    const placed: PlacedTx[] = [];
    let parentHash = parent.blockHash;
    let last: Microblock | null = null;
    const perBlock = Math.ceil(txs.length / count);
    for (let seq = 0; seq < count; seq++) {
      const hash = '0x' + derivedBytes(net.seed, `microblock:${parent.height}:${seq}`).toString('hex');
      last = { hash, sequence: seq, parentHash };
      for (const tx of txs.slice(seq * perBlock, (seq + 1) * perBlock)) placed.push({ tx, microblock: last });
      parentHash = hash;
    }
    const stream = { placed, last: last! };
    this.stream = stream;
    net.report.microblocks += count;
    net.report.microblockTxs += txs.length;
    net.emitter.plan({
      at: parent.burn.time * 1000 + 120_000,
      path: '/new_microblocks',
      payload: () => microblocksPayload(parent, stream, net.modernNode),
      onWrite: () => net.mempool.microblock(txs),
    });
    for (const tx of txs) net.emitter.queueSigning(tx);
  }
}

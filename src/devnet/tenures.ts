import { nakamotoBlockPayload, type StacksBlock } from './block-messages.js';
import { consensusHash, type BurnBlock } from './burnchain.js';
import type { Devnet } from './devnet.js';
import type { TxDraft } from './drafts.js';
import type { Reward } from './miner-rewards.js';
import { sealNakamotoBlock } from './nakamoto.js';
import { derivedBytes } from './random.js';
import type { SealedLater } from './ledger.js';
import { TenureChangeCause } from './wire.js';

// Epoch 3.0 (Nakamoto): each burn block elects a miner whose tenure is a few blocks seconds apart. The
// first block opens it with a tenure change (block found) and a Nakamoto coinbase carrying the VRF proof of
// the miner's election; a burn block without a winner lets the miner extend its tenure (a tenure change,
// extended). Every block carries its own time, the miner's signature and the signer set's signatures over
// the real header hash; no microblocks. See nakamoto.ts.

/** Blocks per Nakamoto tenure (mainnet mines far more; a small chain should still show several tenures). */
const TENURE_BLOCKS = { min: 2, max: 8 };
/** Seconds between Nakamoto blocks. */
const BLOCK_SPACING = { min: 4, max: 12 };
/** Chance that a burn block has no sortition winner: the current miner extends its tenure. */
const EMPTY_SORTITION = 0.08;
/** Chance that a tenure's coinbase pays its reward to another principal. */
const ALT_RECIPIENT = 0.25;
/** Chance that a signer's signature is missing from a block (others still hold the threshold). */
const SIGNER_ABSENT = 0.05;

/** What opens a tenure (a block-found tenure change and a coinbase) or extends it (a tenure change). */
interface TenureOpening {
  change: SealedLater;
  coinbase: TxDraft | null;
}

/** The Nakamoto tenure being mined. */
interface Tenure {
  miner: number;
  burn: BurnBlock;
  consensusHash: Buffer;
  tenureHeight: number;
  minerTxid: string;
  burnSpent: number;
  /** blocks mined so far */
  blocks: number;
  reward: Reward;
}

export class NakamotoTenures {
  private tenure: Tenure | null = null;
  /** tenures so far, epoch 2.x blocks included (one tenure each) */
  private tenureHeight = 0;

  constructor(private readonly net: Devnet) {}

  /**
   * Per burn block, a tenure of a few blocks seconds apart (or, without a sortition winner, the current
   * tenure extended), from the first height after epoch 2.x to the tip height.
   */
  async run() {
    const net = this.net;
    this.tenureHeight = net.tip!.tenureHeight;
    let height = net.epoch2Tip + 1;
    while (height <= net.blocks) {
      const extend = this.tenure !== null && net.random.chance(EMPTY_SORTITION);
      const count = Math.min(net.random.int(TENURE_BLOCKS.min, TENURE_BLOCKS.max), net.blocks - height + 1);
      net.interval(height);
      const burn = net.burnchain.next();
      const opening = extend ? this.extend(burn) : this.start(burn);
      let time = burn.time + net.random.int(8, 20);
      for (let i = 0; i < count; i++, height++) {
        if (i > 0) net.interval(height, net.burnchain.height);
        this.block(height, time, i === 0 ? opening : null);
        time += net.random.int(BLOCK_SPACING.min, BLOCK_SPACING.max);
        await net.emitter.flush();
      }
    }
  }

  /**
   * A sortition elects a miner: its tenure opens with a tenure change (block found) naming the tenure it
   * follows, and a Nakamoto coinbase proving the election with the miner's VRF key. (The node proves over the
   * sortition's hash, which no message carries; here the burn block hash stands for it, so anyone can check
   * a proof against the miner's VRF key.)
   */
  private start(burn: BurnBlock): TenureOpening {
    const net = this.net;
    const parent = net.tip!;
    const previousBlocks = this.tenure?.blocks ?? 1; // an epoch 2.x tenure is one block
    const miner = net.pickMiner();
    const tenureConsensusHash = consensusHash(net.seed, burn.height);
    const tenureHeight = ++this.tenureHeight;
    const change = net.ledger.tenureChange(miner, {
      tenureConsensusHash,
      prevTenureConsensusHash: parent.consensusHash,
      burnViewConsensusHash: tenureConsensusHash,
      previousTenureBlocks: previousBlocks,
      cause: TenureChangeCause.BlockFound,
    });
    const altRecipient = net.random.chance(ALT_RECIPIENT) ? net.ledger.users[net.ledger.busy()] : null;
    const coinbase = net.ledger.nakamotoCoinbase(
      miner,
      `tenure:${tenureHeight}`,
      Buffer.from(burn.hash.slice(2), 'hex'),
      altRecipient?.principal ?? null,
    );
    const minerAddress = net.ledger.miners[miner].address;
    this.tenure = {
      miner,
      burn,
      consensusHash: tenureConsensusHash,
      tenureHeight,
      minerTxid: '0x' + derivedBytes(net.seed, `miner-tx:${burn.height}`).toString('hex'),
      burnSpent: burn.amount,
      blocks: 0,
      reward: {
        miner: minerAddress,
        recipient: altRecipient?.address ?? minerAddress,
        fees: 0n,
        block: parent,
      },
    };
    net.report.tenures++;
    return { change, coinbase };
  }

  /** A burn block without a winner: the miner extends its tenure (same consensus hash, a new burn view). */
  private extend(burn: BurnBlock): TenureOpening {
    const tenure = this.tenure!;
    const change = this.net.ledger.tenureChange(tenure.miner, {
      tenureConsensusHash: tenure.consensusHash,
      prevTenureConsensusHash: tenure.consensusHash,
      burnViewConsensusHash: consensusHash(this.net.seed, burn.height),
      previousTenureBlocks: tenure.blocks,
      cause: TenureChangeCause.Extended,
    });
    this.net.report.tenureExtends++;
    return { change, coinbase: null };
  }

  /**
   * A Nakamoto block of the current tenure at `time`; the first after a sortition (or an empty one) opens
   * with the tenure change (and the coinbase).
   */
  private block(height: number, time: number, opening: TenureOpening | null) {
    const net = this.net;
    const tenure = this.tenure!;
    const parent = net.tip!;
    const lead = opening ? [opening.change.draft, ...(opening.coinbase ? [opening.coinbase] : [])] : [];
    const user = net.queue.take(net.queue.blockCapacity());
    if (lead.length === 0 && user.length === 0) {
      // a miner does not propose an empty block: this one mines a tx it was just sent
      const tx = net.mix.next(net.burnchain.height);
      if (tx) user.push(tx);
    }
    const txs = [...lead, ...user];
    const block: StacksBlock = {
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
    const reward = opensTenure ? net.rewards.matured(tenure.tenureHeight) : null;
    if (opensTenure) {
      tenure.reward.block = block;
      net.rewards.record(tenure.tenureHeight, tenure.reward);
    }
    for (const tx of user) tenure.reward.fees += BigInt(tx.fee);
    tenure.blocks++;
    this.planMessage(block, parent, tenure, txs, opening, reward);
    for (const tx of txs) net.emitter.queueSigning(tx);
    net.canonical(block, txs);
    net.tip = block;
  }

  /**
   * Plans the block's `/new_block`. When it is written, the previous block's hash is known: the tenure change
   * that names it is signed, then the block sealed.
   */
  private planMessage(
    block: StacksBlock,
    parent: StacksBlock,
    tenure: Tenure,
    txs: TxDraft[],
    opening: TenureOpening | null,
    reward: Reward | null,
  ) {
    const net = this.net;
    const rewardSet = net.rewardSets.members(tenure.burn.height);
    const receivedAt = block.time * 1000 + 500;
    net.emitter.plan({
      at: receivedAt,
      path: '/new_block',
      block: { height: block.height, txs: txs.length },
      payload: () => {
        opening?.change.seal(Buffer.from(parent.indexBlockHash.slice(2), 'hex'));
        const sealed = this.seal(block, parent, tenure, txs);
        // the tip's index block hash is known once it is sealed, here
        if (block.height === net.report.tipHeight) net.report.tipIndexBlockHash = block.indexBlockHash;
        const maturedMinerRewards = net.rewards.json(reward);
        return nakamotoBlockPayload({
          block,
          parent,
          minerTxid: tenure.minerTxid,
          maturedMinerRewards,
          txs,
          sealed,
          rewardSet,
        });
      },
      onWrite: () => net.mempool.block(txs, block.height, Math.floor(receivedAt / 1000), undefined, true),
    });
  }

  /**
   * Builds the block's header (its tx ids are known now), has the miner sign it and the signers sign its
   * hash, and sets the block's hashes.
   */
  private seal(block: StacksBlock, parent: StacksBlock, tenure: Tenure, txs: TxDraft[]) {
    const { seed, ledger, signerSet } = this.net;
    const hex = (s: string) => Buffer.from(s.slice(2), 'hex');
    const miner = ledger.miners[tenure.miner];
    const absent = derivedBytes(seed, `absent-signers:${block.height}`);
    const sealed = sealNakamotoBlock(
      {
        chainLength: block.height,
        burnSpent: tenure.burnSpent,
        consensusHash: tenure.consensusHash,
        parentBlockId: hex(parent.indexBlockHash),
        txids: txs.map((tx) => hex(tx.txid)),
        stateIndexRoot: derivedBytes(seed, `state-root:${block.height}`),
        timestamp: block.time,
      },
      ledger.keys.privateKeys[miner.key],
      signerSet,
      (i) => absent[i] < 256 * SIGNER_ABSENT,
    );
    block.blockHash = '0x' + sealed.blockHash.toString('hex');
    block.indexBlockHash = '0x' + sealed.indexBlockHash.toString('hex');
    return sealed;
  }
}

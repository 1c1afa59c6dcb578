import type { BurnBlock } from './burnchain.js';
import type { TxDraft } from './drafts.js';
import { sortedKeys, sumCosts, transactionsAndEvents, type Microblock, type PlacedTx } from './format.js';
import { preparedCycle, type SealedBlock, type SignerSet } from './nakamoto.js';

// The payloads of `/new_block` and `/new_microblocks`, built when the message is written (their txs signed,
// a Nakamoto block's hashes known): as a 2.x node posts them, or as a 3.x node does (more members, keys in
// alphabetical order), whose epoch 2.x blocks carry the 3.x members with their epoch 2.x values.

export interface StacksBlock {
  height: number;
  /** a Nakamoto block's hashes are known once it is written (they hash its header) */
  blockHash: string;
  indexBlockHash: string;
  burn: BurnBlock;
  /** block time: the burn block's in epoch 2.x */
  time: number;
  nakamoto: boolean;
  consensusHash: Buffer;
  tenureHeight: number;
}

/** A microblock stream on top of a block, waiting for the next block to confirm it. */
export interface MicroblockStream {
  placed: PlacedTx[];
  last: Microblock;
}

export const ZERO_HASH = '0x' + '00'.repeat(32);

/** PoX force-unlock burn heights of pox-1 to pox-3 on mainnet, as a 3.x node announces them. */
const POX_UNLOCK_HEIGHTS = { v1: 781_552, v2: 787_652, v3: 840_361 };

type RewardSetMembers = ReturnType<RewardSetAnnouncements['members']>;

/**
 * The `reward_set` and `cycle_number` of block messages: the first block in a prepare phase carries the
 * reward set it computes for the next cycle; others carry nulls.
 */
export class RewardSetAnnouncements {
  private readonly announced = new Set<number>();

  constructor(private readonly signerSet: SignerSet) {}

  /** The members of the next block message whose burn height is `burnHeight`. */
  members(burnHeight: number) {
    const cycle = preparedCycle(burnHeight);
    if (cycle === null || this.announced.has(cycle)) return { reward_set: null, cycle_number: null };
    this.announced.add(cycle);
    return { reward_set: this.signerSet.rewardSetJson(), cycle_number: cycle };
  }
}

/** The members every `/new_block` of a 3.x node has that a 2.x node's lack (epoch 2.x values). */
function modernBlockMembers(block: StacksBlock) {
  return {
    block_time: null,
    consensus_hash: '0x' + block.consensusHash.toString('hex'),
    pox_v1_unlock_height: POX_UNLOCK_HEIGHTS.v1,
    pox_v2_unlock_height: POX_UNLOCK_HEIGHTS.v2,
    pox_v3_unlock_height: POX_UNLOCK_HEIGHTS.v3,
    signer_bitvec: null,
    tenure_height: block.tenureHeight,
  };
}

/** `/new_block` of an epoch 2.x block: its anchored txs, then the microblock txs it confirms. */
export function epoch2BlockPayload(m: {
  block: StacksBlock;
  parentBlockHash: string;
  parentIndexBlockHash: string;
  parentBurn: { hash: string; height: number; time: number };
  minerTxid: string;
  maturedMinerRewards: object[];
  anchored: TxDraft[];
  confirmed: MicroblockStream | null;
  /** null: posted as a 2.x node posts it */
  rewardSet: RewardSetMembers | null;
}) {
  const placed: PlacedTx[] = [
    ...m.anchored.map((tx) => ({ tx, microblock: null })),
    ...(m.confirmed?.placed ?? []),
  ];
  const payload = {
    block_hash: m.block.blockHash,
    block_height: m.block.height,
    index_block_hash: m.block.indexBlockHash,
    parent_block_hash: m.parentBlockHash,
    parent_index_block_hash: m.parentIndexBlockHash,
    parent_microblock: m.confirmed?.last.hash ?? ZERO_HASH,
    parent_microblock_sequence: m.confirmed?.last.sequence ?? 0,
    burn_block_hash: m.block.burn.hash,
    burn_block_height: m.block.burn.height,
    burn_block_time: m.block.burn.time,
    parent_burn_block_hash: m.parentBurn.hash,
    parent_burn_block_height: m.parentBurn.height,
    parent_burn_block_timestamp: m.parentBurn.time,
    miner_txid: m.minerTxid,
    matured_miner_rewards: m.maturedMinerRewards,
    anchored_cost: sumCosts(m.anchored),
    confirmed_microblocks_cost: sumCosts(m.confirmed?.placed.map((p) => p.tx) ?? []),
  };
  if (!m.rewardSet) return { ...payload, ...transactionsAndEvents(placed) };
  return sortedKeys({
    ...payload,
    ...modernBlockMembers(m.block),
    ...m.rewardSet,
    ...transactionsAndEvents(placed, true),
  });
}

/** `/new_block` of a Nakamoto block (a 3.x node's): its own time, the miner's and the signers' signatures. */
export function nakamotoBlockPayload(m: {
  block: StacksBlock;
  parent: StacksBlock;
  minerTxid: string;
  maturedMinerRewards: object[];
  txs: TxDraft[];
  sealed: SealedBlock;
  rewardSet: RewardSetMembers;
}) {
  const { block, parent, sealed } = m;
  return sortedKeys({
    ...modernBlockMembers(block),
    ...m.rewardSet,
    ...transactionsAndEvents(
      m.txs.map((tx) => ({ tx, microblock: null })),
      true,
    ),
    anchored_cost: sumCosts(m.txs),
    block_hash: block.blockHash,
    block_height: block.height,
    block_time: block.time,
    burn_block_hash: block.burn.hash,
    burn_block_height: block.burn.height,
    burn_block_time: block.burn.time,
    confirmed_microblocks_cost: sumCosts([]),
    index_block_hash: block.indexBlockHash,
    matured_miner_rewards: m.maturedMinerRewards,
    miner_signature: '0x' + sealed.minerSignature.toString('hex'),
    miner_txid: m.minerTxid,
    parent_block_hash: parent.blockHash,
    parent_burn_block_hash: parent.burn.hash,
    parent_burn_block_height: parent.burn.height,
    parent_burn_block_timestamp: parent.burn.time,
    parent_index_block_hash: parent.indexBlockHash,
    parent_microblock: ZERO_HASH,
    parent_microblock_sequence: 0,
    signer_bitvec: sealed.poxTreatment.toString('hex'),
    signer_signature: sealed.signerSignatures.map((sig) => sig.toString('hex')),
    signer_signature_hash: block.blockHash,
  });
}

/** `/new_microblocks` of a stream on top of `parent`. */
export function microblocksPayload(parent: StacksBlock, stream: MicroblockStream, modernNode: boolean) {
  const payload = {
    parent_index_block_hash: parent.indexBlockHash,
    burn_block_hash: parent.burn.hash,
    burn_block_height: parent.burn.height,
    burn_block_timestamp: parent.burn.time,
    ...transactionsAndEvents(stream.placed, modernNode, true),
  };
  return modernNode ? sortedKeys(payload) : payload;
}

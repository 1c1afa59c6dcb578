import { sumExecutionCosts } from '../protocol/payloads.js';
import type { BurnBlock } from './burnchain.js';
import type { TxDraft } from './drafts.js';
import { preparedCycle, type SealedBlock, type SignerSet } from './nakamoto.js';

// The payloads of `/new_block` and `/new_microblocks`, built when the message is written (their txs signed,
// a Nakamoto block's hashes known): as a 2.x node posts them, or as a 3.x node does, whose JSON objects list
// their keys in alphabetical order (serde_json maps), whose transactions carry `contract_interface`, and
// whose blocks carry more members (epoch 2.x blocks too, with their epoch 2.x values).

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

/** A microblock of a stream: its hash, its place in the stream, and the block or microblock it follows. */
export interface Microblock {
  hash: string;
  sequence: number;
  parentHash: string;
}

/** A tx as a block or microblock message lists it: anchored (`microblock` null) or in a microblock. */
export interface PlacedTx {
  tx: TxDraft;
  microblock: Microblock | null;
}

/** A microblock stream on top of a block, waiting for the next block to confirm it. */
export interface MicroblockStream {
  placed: PlacedTx[];
  last: Microblock;
}

export const ZERO_HASH = '0x' + '00'.repeat(32);

/** The object with its keys in alphabetical order (one level). */
export function sortedKeys<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as T;
}

function deepSortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepSortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return sortedKeys(Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deepSortedKeys(v)])));
}

/**
 * The `transactions` and `events` arrays of a block or microblock message (`modernNode`: a 3.x node's, keys
 * sorted, with `vm_error` and `contract_interface`), indexes in list order. In a `/new_microblocks` message
 * (`perMicroblock`) a node numbers each microblock's txs from 0 (the receipts of one microblock), while event
 * indexes run on across the message: so do the recorded node messages (mainnet-reorg-scenario2: tx indexes
 * 0,1,2 | 0 | 0, event indexes 0-5). A block numbers all its txs.
 */
function transactionsAndEvents(placed: PlacedTx[], modernNode: boolean, perMicroblock = false) {
  const transactions: object[] = [];
  const events: object[] = [];
  const countInMicroblock = new Map<string, number>();
  placed.forEach(({ tx, microblock }, positionInMessage) => {
    let txIndex = positionInMessage;
    if (perMicroblock && microblock) {
      txIndex = countInMicroblock.get(microblock.hash) ?? 0;
      countInMicroblock.set(microblock.hash, txIndex + 1);
    }
    if (modernNode) {
      transactions.push({
        burnchain_op: null,
        contract_interface: tx.contractAbi && deepSortedKeys(tx.contractAbi),
        execution_cost: tx.cost,
        microblock_hash: microblock?.hash ?? null,
        microblock_parent_hash: microblock?.parentHash ?? null,
        microblock_sequence: microblock?.sequence ?? null,
        raw_result: tx.rawResult,
        raw_tx: tx.rawTx,
        status: tx.status,
        tx_index: txIndex,
        txid: tx.txid,
        vm_error: null,
      });
      if (tx.status !== 'success') return;
      for (const event of tx.events) {
        const body = sortedKeys(event.body);
        const event_index = events.length;
        const { txid } = tx;
        events.push(
          event.type === 'contract_event'
            ? { committed: true, contract_event: body, event_index, txid, type: event.type }
            : { committed: true, event_index, [event.type]: body, txid, type: event.type },
        );
      }
      return;
    }
    transactions.push({
      txid: tx.txid,
      tx_index: txIndex,
      raw_tx: tx.rawTx,
      status: tx.status,
      raw_result: tx.rawResult,
      contract_abi: tx.contractAbi,
      execution_cost: tx.cost,
      microblock_hash: microblock?.hash ?? null,
      microblock_sequence: microblock?.sequence ?? null,
      microblock_parent_hash: microblock?.parentHash ?? null,
      // no `vm_error`: 2.x nodes do not post it (the recorded 2.0-2.5 nodes' txs lack it; 3.x nodes added it
      // to TransactionEventPayload), so the 2.x shape leaves it out (test/ingest/payload-shapes.test.ts)
      burnchain_op: null,
    });
    if (tx.status !== 'success') return;
    for (const event of tx.events) {
      events.push({
        txid: tx.txid,
        type: event.type,
        committed: true,
        event_index: events.length,
        [event.type]: event.body,
      });
    }
  });
  return { transactions, events };
}

const sumCosts = (txs: TxDraft[]) => sumExecutionCosts(txs.map((tx) => tx.cost));

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
  if (!m.rewardSet) return { ...payload, ...transactionsAndEvents(placed, false) };
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

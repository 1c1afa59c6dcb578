import { createHash } from 'node:crypto';
import {
  Cl,
  makeContractCall,
  makeSTXTokenTransfer,
  privateKeyToAddress,
  type ClarityValue,
} from '@stacks/transactions';
import type { Ingestor } from '../../src/ingest/ingestor.js';

// A small synthetic testnet chain for API tests: real signed transactions, event-observer messages built
// around them and applied through the Ingestor, as the node would post them.

export const SENDER_KEY = '7287ba251d44a4d3fd9276c88ce34c5c52a038955511cccaf77e61068649c17801';
export const SENDER = privateKeyToAddress(SENDER_KEY, 'testnet');
export const RECIPIENT = 'ST2JHG361ZXG51QTKY2NQCVBPPRRE2KZB1HR05NNC';

export interface TestTx {
  tx_id: string;
  raw_tx: string;
  /** events the node reports for it when mined (without txid/event_index: filled in) */
  events?: Record<string, unknown>[];
  status?: 'success' | 'abort_by_response' | 'abort_by_post_condition';
}

/** `0x` + sha256 of a label: stable fake hashes. */
export function fakeHash(label: string): string {
  return '0x' + createHash('sha256').update(label).digest('hex');
}

export async function transferTx(options: {
  nonce: number;
  fee?: number;
  amount?: number;
  memo?: string;
}): Promise<TestTx> {
  const tx = await makeSTXTokenTransfer({
    recipient: RECIPIENT,
    amount: BigInt(options.amount ?? 1000),
    senderKey: SENDER_KEY,
    network: 'testnet',
    nonce: BigInt(options.nonce),
    fee: BigInt(options.fee ?? 180),
    memo: options.memo,
  });
  const amount = String(options.amount ?? 1000);
  return {
    tx_id: '0x' + tx.txid(),
    raw_tx: '0x' + tx.serialize(),
    events: [
      {
        type: 'stx_transfer_event',
        stx_transfer_event: { sender: SENDER, recipient: RECIPIENT, amount, memo: '' },
      },
    ],
  };
}

export async function contractCallTx(options: {
  nonce: number;
  contract: string;
  functionName: string;
  args: ClarityValue[];
}): Promise<TestTx> {
  const [address, name] = options.contract.split('.');
  const tx = await makeContractCall({
    contractAddress: address,
    contractName: name,
    functionName: options.functionName,
    functionArgs: options.args,
    senderKey: SENDER_KEY,
    network: 'testnet',
    nonce: BigInt(options.nonce),
    fee: BigInt(300),
    validateWithAbi: false,
    postConditionMode: 'allow',
  });
  return { tx_id: '0x' + tx.txid(), raw_tx: '0x' + tx.serialize() };
}

export { Cl };

/** A contract log event (`print`) with a uint value. */
export function printEvent(contract: string, value: number): Record<string, unknown> {
  const hex = '0x01' + BigInt(value).toString(16).padStart(32, '0');
  return {
    type: 'contract_event',
    contract_event: { contract_identifier: contract, topic: 'print', raw_value: hex },
  };
}

interface BlockRef {
  height: number;
  index_block_hash: string;
  block_hash: string;
  burn_block_height: number;
  burn_block_time: number;
}

const GENESIS: BlockRef = {
  height: 0,
  index_block_hash: fakeHash('index-genesis'),
  block_hash: fakeHash('block-genesis'),
  burn_block_height: 100,
  burn_block_time: 1_700_000_000,
};

const ZERO_HASH = '0x' + '0'.repeat(64);

interface MicroblockRef {
  hash: string;
  sequence: number;
  parent: string;
}

/** Payload entries of txs, mined anchored or in a microblock, with event indexes numbered from `firstEvent`. */
function txEntries(txs: TestTx[], microblock?: MicroblockRef, firstTxIndex = 0, firstEvent = 0) {
  const transactions = txs.map((tx, i) => ({
    txid: tx.tx_id,
    tx_index: firstTxIndex + i,
    raw_tx: tx.raw_tx,
    status: tx.status ?? 'success',
    raw_result: tx.status === 'abort_by_response' ? '0x0803' : '0x0703',
    execution_cost: { read_count: 1, read_length: 2, runtime: 3, write_count: 4, write_length: 5 },
    microblock_hash: microblock?.hash ?? null,
    microblock_sequence: microblock?.sequence ?? null,
    microblock_parent_hash: microblock?.parent ?? null,
  }));
  let eventIndex = firstEvent;
  const events = txs.flatMap((tx) =>
    (tx.events ?? []).map((e) => ({ txid: tx.tx_id, event_index: eventIndex++, committed: true, ...e })),
  );
  return { transactions, events };
}

/** Builds and applies observer messages; `tip` follows the last canonical block. */
export class TestChain {
  tip: BlockRef = GENESIS;
  private clock = 1_700_000_000;

  constructor(private readonly ingestor: Ingestor) {}

  private now(): Date {
    this.clock += 60;
    return new Date(this.clock * 1000);
  }

  /**
   * A block on `parent` (default: the tip). With `confirms`, it confirms that microblock of the parent's
   * stream, whose txs the payload then carries first (as the node sends them).
   */
  async block(
    txs: TestTx[],
    options: { parent?: BlockRef; fork?: string; confirms?: MicroblockRef & { txs: TestTx[] } } = {},
  ): Promise<BlockRef> {
    const parent = options.parent ?? this.tip;
    const height = parent.height + 1;
    const label = `${height}${options.fork ?? ''}`;
    const block: BlockRef = {
      height,
      index_block_hash: fakeHash(`index-${label}`),
      block_hash: fakeHash(`block-${label}`),
      burn_block_height: parent.burn_block_height + 1,
      burn_block_time: parent.burn_block_time + 600,
    };
    const confirmed = options.confirms
      ? txEntries(options.confirms.txs, options.confirms)
      : { transactions: [], events: [] };
    const own = txEntries(txs, undefined, confirmed.transactions.length, confirmed.events.length);
    const transactions = [...confirmed.transactions, ...own.transactions];
    const events = [...confirmed.events, ...own.events];
    const body = {
      block_hash: block.block_hash,
      block_height: height,
      index_block_hash: block.index_block_hash,
      parent_index_block_hash: parent.index_block_hash,
      parent_block_hash: parent.block_hash,
      parent_microblock: options.confirms?.hash ?? ZERO_HASH,
      parent_microblock_sequence: options.confirms?.sequence ?? 0,
      burn_block_hash: fakeHash(`burn-${label}`),
      burn_block_height: block.burn_block_height,
      burn_block_time: block.burn_block_time,
      parent_burn_block_timestamp: parent.burn_block_time,
      miner_txid: fakeHash(`miner-${label}`),
      transactions,
      events,
    };
    await this.ingestor.apply('/new_block', JSON.stringify(body), this.now());
    if (height > this.tip.height) this.tip = block;
    return block;
  }

  /** An unconfirmed microblock on the tip (sequence 0 builds on the tip block, n on microblock n-1). */
  async microblock(txs: TestTx[], sequence = 0, parent = ''): Promise<MicroblockRef & { txs: TestTx[] }> {
    const ref = {
      hash: fakeHash(`microblock-${this.tip.height}-${sequence}`),
      sequence,
      parent: parent || this.tip.block_hash,
      txs,
    };
    const { transactions, events } = txEntries(txs, ref);
    const body = {
      parent_index_block_hash: this.tip.index_block_hash,
      burn_block_hash: fakeHash(`burn-${this.tip.height}`),
      burn_block_height: this.tip.burn_block_height,
      burn_block_timestamp: this.tip.burn_block_time,
      transactions,
      events,
    };
    await this.ingestor.apply('/new_microblocks', JSON.stringify(body), this.now());
    return ref;
  }

  async mempool(txs: TestTx[]): Promise<Date> {
    const at = this.now();
    await this.ingestor.apply('/new_mempool_tx', JSON.stringify(txs.map((t) => t.raw_tx)), at);
    return at;
  }

  async drop(txIds: string[], reason: string, newTxId: string | null = null): Promise<void> {
    const body = { dropped_txids: txIds, reason, new_txid: newTxId };
    await this.ingestor.apply('/drop_mempool_tx', JSON.stringify(body), this.now());
  }
}

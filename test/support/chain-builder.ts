import { createHash } from 'node:crypto';
import { makeSTXTokenTransfer, privateKeyToAddress } from '@stacks/transactions';

// Builds event-observer messages for tests: really signed testnet transactions and /new_block,
// /new_microblocks payloads with the fields a stacks-node sends, on a chain of made-up block hashes.

const hash = (...parts: (string | number)[]) =>
  '0x' + createHash('sha256').update(parts.join('/')).digest('hex');

/** Deterministic private keys: account i of a test. */
function testKey(i: number): string {
  return createHash('sha256').update(`test-account-${i}`).digest('hex') + '01';
}

export function testAddress(i: number): string {
  return privateKeyToAddress(testKey(i), 'testnet');
}

export interface SignedTx {
  txid: string;
  raw: string;
  sender: string;
}

export async function signedTransfer(options: {
  from: number;
  to: string;
  amount: number;
  fee: number;
  nonce: number;
  memo?: string;
}): Promise<SignedTx> {
  const tx = await makeSTXTokenTransfer({
    recipient: options.to,
    amount: BigInt(options.amount),
    senderKey: testKey(options.from),
    network: 'testnet',
    fee: BigInt(options.fee),
    nonce: BigInt(options.nonce),
    memo: options.memo,
  });
  return { txid: '0x' + tx.txid(), raw: '0x' + tx.serialize(), sender: testAddress(options.from) };
}

export interface BlockTxInput {
  tx: SignedTx;
  /** default: a successful transfer with its stx_transfer_event (amount/recipient read from `transfer`) */
  status?: 'success' | 'abort_by_response';
  transfer?: { recipient: string; amount: number };
  microblock?: { hash: string; sequence: number; parent: string };
}

export interface BuiltBlock {
  index_block_hash: string;
  block_hash: string;
  block_height: number;
  payload: Record<string, unknown>;
  body: string;
}

function txEntries(txs: BlockTxInput[]) {
  const transactions = txs.map((t, i) => ({
    txid: t.tx.txid,
    tx_index: i,
    raw_tx: t.tx.raw,
    status: t.status ?? 'success',
    raw_result: t.status === 'abort_by_response' ? '0x080100000000000000000000000000000001' : '0x0703',
    contract_abi: null,
    execution_cost: { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 },
    microblock_hash: t.microblock?.hash ?? null,
    microblock_sequence: t.microblock?.sequence ?? null,
    microblock_parent_hash: t.microblock?.parent ?? null,
  }));
  const events = txs.flatMap((t, i) =>
    t.transfer && (t.status ?? 'success') === 'success'
      ? [
          {
            txid: t.tx.txid,
            event_index: i,
            committed: true,
            type: 'stx_transfer_event',
            stx_transfer_event: {
              sender: t.tx.sender,
              recipient: t.transfer.recipient,
              amount: String(t.transfer.amount),
            },
          },
        ]
      : [],
  );
  return { transactions, events };
}

/** A chain of blocks; `block()` extends the given parent (default: the last block built). */
export class ChainBuilder {
  private last: BuiltBlock | undefined;
  private count = 0;

  block(
    options: {
      txs?: BlockTxInput[];
      parent?: BuiltBlock | null;
      fork?: string;
      parentMicroblock?: { hash: string; sequence: number };
    } = {},
  ): BuiltBlock {
    const parent = options.parent === undefined ? this.last : (options.parent ?? undefined);
    const height = parent ? parent.block_height + 1 : 1;
    const id = `${options.fork ?? 'main'}-${height}-${this.count++}`;
    const block_hash = hash('block', id);
    const index_block_hash = hash('index', id);
    const { transactions, events } = txEntries(options.txs ?? []);
    const payload = {
      block_hash,
      block_height: height,
      index_block_hash,
      parent_index_block_hash: parent?.index_block_hash ?? hash('genesis-index'),
      parent_block_hash: parent?.block_hash ?? hash('genesis'),
      parent_microblock: options.parentMicroblock?.hash ?? '0x' + '0'.repeat(64),
      parent_microblock_sequence: options.parentMicroblock?.sequence ?? 0,
      burn_block_hash: hash('burn', id),
      burn_block_height: 100 + height,
      burn_block_time: 1_700_000_000 + height * 600,
      parent_burn_block_timestamp: 1_700_000_000 + (height - 1) * 600,
      miner_txid: hash('miner', id),
      matured_miner_rewards: [],
      transactions,
      events,
    };
    const built = {
      index_block_hash,
      block_hash,
      block_height: height,
      payload,
      body: JSON.stringify(payload),
    };
    this.last = built;
    return built;
  }

  /** A /new_microblocks message built on `parent` (default: the last block). */
  microblocks(options: { parent?: BuiltBlock; txs: BlockTxInput[] }): string {
    const parent = options.parent ?? this.last!;
    const { transactions, events } = txEntries(options.txs);
    return JSON.stringify({
      parent_index_block_hash: parent.index_block_hash,
      burn_block_hash: hash('mb-burn', parent.index_block_hash),
      burn_block_height: 100 + parent.block_height,
      burn_block_timestamp: 1_700_000_000 + parent.block_height * 600 + 30,
      transactions: transactions.map((t, i) => ({ ...t, tx_index: i })),
      events,
    });
  }
}

import type { TxDraft } from './drafts.js';

// Event-observer payloads (the JSON a stacks-node 2.x posts), built from signed drafts.

export interface MicroblockPlacement {
  hash: string;
  sequence: number;
  parentHash: string;
}

export interface PlacedTx {
  tx: TxDraft;
  microblock: MicroblockPlacement | null;
}

/** The `transactions` and `events` arrays of a block or microblock message, indexes in list order. */
export function transactionsAndEvents(placed: PlacedTx[]) {
  const transactions: object[] = [];
  const events: object[] = [];
  placed.forEach(({ tx, microblock }, txIndex) => {
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
      vm_error: null,
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

export function sumCosts(txs: TxDraft[]) {
  const total = { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 };
  for (const { cost } of txs) {
    total.read_count += cost.read_count;
    total.read_length += cost.read_length;
    total.runtime += cost.runtime;
    total.write_count += cost.write_count;
    total.write_length += cost.write_length;
  }
  return total;
}

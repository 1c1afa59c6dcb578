import type { TxDraft } from './drafts.js';
import { sumExecutionCosts } from '../protocol/payloads.js';

// Event-observer payloads built from signed drafts: as a stacks-node 2.x posts them, or (`sorted`) as a 3.x
// node does, whose JSON objects list their keys in alphabetical order (serde_json maps) and whose
// transactions carry `contract_interface`.

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
 * The `transactions` and `events` arrays of a block or microblock message, indexes in list order. In a
 * `/new_microblocks` message (`perMicroblock`) a node numbers each microblock's txs from 0 (the receipts of
 * one microblock), while event indexes run on across the message: so do the recorded node messages
 * (mainnet-reorg-scenario2: tx indexes 0,1,2 | 0 | 0, event indexes 0-5). A block numbers all its txs.
 */
export function transactionsAndEvents(placed: PlacedTx[], sorted = false, perMicroblock = false) {
  const transactions: object[] = [];
  const events: object[] = [];
  const countInMicroblock = new Map<string, number>();
  placed.forEach(({ tx, microblock }, positionInMessage) => {
    let txIndex = positionInMessage;
    if (perMicroblock && microblock) {
      txIndex = countInMicroblock.get(microblock.hash) ?? 0;
      countInMicroblock.set(microblock.hash, txIndex + 1);
    }
    if (sorted) {
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

export const sumCosts = (txs: TxDraft[]) => sumExecutionCosts(txs.map((tx) => tx.cost));

// Indexes the shared event-replay fixtures: every raw tx, raw result, deployed ABI and Clarity value in them.
import { decodeTransaction, txIdFromRaw } from '../../src/chain/transaction.js';
import { fixtureMessages } from '../support/shared.js';

interface FixtureTx {
  txid: string;
  raw_tx: string;
  raw_result?: string;
  contract_abi?: unknown;
  contract_interface?: unknown;
}

interface FixtureEvent {
  txid: string;
  type: string;
  [key: string]: unknown;
}

export interface FixtureIndex {
  /** tx id → raw tx hex, from blocks, microblocks and the mempool */
  rawTx: Map<string, string>;
  /** tx id → raw result hex (mined txs) */
  rawResult: Map<string, string>;
  /** contract id → ABI of its deploy tx */
  abis: Map<string, unknown>;
  /** every Clarity value hex in the fixture (results, print values, nft values) */
  clarityValues: string[];
  events: FixtureEvent[];
}

/** Indexes a fixture's transactions (raw bytes, results, deployed ABIs) and Clarity values. */
export function indexFixture(name: string): FixtureIndex {
  const idx: FixtureIndex = {
    rawTx: new Map(),
    rawResult: new Map(),
    abis: new Map(),
    clarityValues: [],
    events: [],
  };
  for (const e of fixtureMessages(name)) {
    if (e.path === '/new_block' || e.path === '/new_microblocks') {
      const p = JSON.parse(e.payload) as { transactions: FixtureTx[]; events: FixtureEvent[] };
      for (const t of p.transactions) {
        idx.rawTx.set(t.txid, t.raw_tx);
        if (t.raw_result) {
          idx.rawResult.set(t.txid, t.raw_result);
          idx.clarityValues.push(t.raw_result);
        }
        const abi = t.contract_abi ?? t.contract_interface;
        if (abi && t.raw_tx !== '0x00') {
          const contractId = decodeTransaction(t.raw_tx).smartContractContractId;
          if (contractId) idx.abis.set(contractId, abi);
        }
      }
      for (const ev of p.events) {
        idx.events.push(ev);
        const body = ev[ev.type] as { raw_value?: string } | undefined;
        if (body?.raw_value) idx.clarityValues.push(body.raw_value);
      }
    } else if (e.path === '/new_mempool_tx') {
      for (const raw of JSON.parse(e.payload) as string[]) idx.rawTx.set(txIdFromRaw(raw), raw);
    }
  }
  return idx;
}

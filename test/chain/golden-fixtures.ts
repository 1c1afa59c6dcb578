// Loads the shared event-replay fixtures and golden API responses (read-only, outside the repo).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { decodeTransaction, txIdFromRaw } from '../../src/chain/transaction.js';

const SHARED_DIR = process.env.SHARED_DIR ?? '/work/shared';
const FIXTURE_DIR = path.join(SHARED_DIR, 'fixtures/event-replay');
const GOLDEN_DIR = path.join(SHARED_DIR, 'golden');
export const SYNTHETIC_DIR = path.join(SHARED_DIR, 'fixtures/synthetic-txs');

interface ReplayEvent {
  id: string;
  path: string;
  payload: unknown;
}

/** Undoes PostgreSQL COPY text escaping (`\\`, `\n`, `\t`, `\r`, ...). */
function unescapeCopyText(s: string): string {
  return s.replace(/\\(.)/g, (_m, c: string) => {
    switch (c) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'v':
        return '\v';
      default:
        return c;
    }
  });
}

export function fixtureNames(): string[] {
  if (!fs.existsSync(FIXTURE_DIR)) return [];
  return fs
    .readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.tsv'))
    .map((f) => f.slice(0, -4))
    .sort();
}

function loadReplay(name: string): ReplayEvent[] {
  const raw = name === 'fuzzed-transactions-1';
  const text = fs.readFileSync(path.join(FIXTURE_DIR, `${name}.tsv`), 'utf8');
  const out: ReplayEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const cols = line.split('\t');
    const payloadText = raw ? cols.slice(3).join('\t') : unescapeCopyText(cols[3]);
    out.push({ id: cols[0], path: cols[2], payload: JSON.parse(payloadText) });
  }
  return out;
}

export interface GoldenRecord {
  path: string;
  status: number;
  body: unknown;
  etag: string | null;
}

export function loadGolden(name: string): GoldenRecord[] {
  const file = path.join(GOLDEN_DIR, `${name}.jsonl.gz`);
  if (!fs.existsSync(file)) return [];
  return zlib
    .gunzipSync(fs.readFileSync(file))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as GoldenRecord);
}

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
  for (const e of loadReplay(name)) {
    if (e.path === '/new_block' || e.path === '/new_microblocks') {
      const p = e.payload as { transactions: FixtureTx[]; events: FixtureEvent[] };
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
      for (const raw of e.payload as string[]) idx.rawTx.set(txIdFromRaw(raw), raw);
    }
  }
  return idx;
}

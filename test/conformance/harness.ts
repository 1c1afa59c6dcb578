import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../src/store/db.js';
import { startTestApi } from '../support/api.js';
import { beyondGoldenNames, loadGolden, type GoldenRecord } from '../support/shared.js';
import { findDeliberateDifference, type GoldenContext } from './deliberate-differences.js';

// Replays a fixture, asks our API every path the original API was asked (golden/<fixture>.jsonl.gz) and
// compares status and body. Volatile parts named by golden/README.md are left out of the comparison.

export const FAMILIES = [
  'tx',
  'tx/multiple',
  'mempool/stats',
  'mempool/fees',
  'blocks',
  'block/by_burn_block_height',
  'contracts/status',
  'address/balances',
  'address/transactions_with_transfers',
  'address/with_transfers',
] as const;

/** The routes beyond the contract's ten (golden/README.md "Beyond the ten"), one family per route. */
export const BEYOND_FAMILIES = [
  'v2/address/transactions',
  'v2/address/transaction/events',
  'v2/burn-block/blocks',
  'v2/burn-blocks',
  'v2/burn-block',
  'v2/blocks',
  'v2/block/transactions',
  'address/nonces',
  'address/stx',
  'v2/address/balances/stx',
  'v2/address/balances/ft',
  'tx/list',
  'nft/holdings',
  'contract',
  'search',
] as const;
export type Family = (typeof FAMILIES)[number] | (typeof BEYOND_FAMILIES)[number];

/** The family of a path of the beyond goldens, if it is one. */
function beyondFamilyOf(p: string): Family | undefined {
  if (/^\/extended\/v2\/addresses\/[^/]+\/transactions$/.test(p)) return 'v2/address/transactions';
  if (/^\/extended\/v2\/addresses\/[^/]+\/transactions\/[^/]+\/events$/.test(p))
    return 'v2/address/transaction/events';
  if (/^\/extended\/v2\/addresses\/[^/]+\/balances\/stx$/.test(p)) return 'v2/address/balances/stx';
  if (/^\/extended\/v2\/addresses\/[^/]+\/balances\/ft$/.test(p)) return 'v2/address/balances/ft';
  if (/^\/extended\/v2\/burn-blocks\/[^/]+\/blocks$/.test(p)) return 'v2/burn-block/blocks';
  if (p === '/extended/v2/burn-blocks') return 'v2/burn-blocks';
  if (/^\/extended\/v2\/burn-blocks\/[^/]+$/.test(p)) return 'v2/burn-block';
  if (p === '/extended/v2/blocks') return 'v2/blocks';
  if (/^\/extended\/v2\/blocks\/[^/]+\/transactions$/.test(p)) return 'v2/block/transactions';
  if (/^\/extended\/v1\/address\/[^/]+\/nonces$/.test(p)) return 'address/nonces';
  if (/^\/extended\/v1\/address\/[^/]+\/stx$/.test(p)) return 'address/stx';
  if (p === '/extended/v1/tx') return 'tx/list';
  if (p === '/extended/v1/tokens/nft/holdings') return 'nft/holdings';
  if (/^\/extended\/v1\/contract\/[^/]+$/.test(p)) return 'contract';
  if (/^\/extended\/v1\/search\/[^/]+$/.test(p)) return 'search';
  return undefined;
}

function familyOf(path: string): Family {
  const p = path.split('?')[0];
  const beyond = beyondFamilyOf(p);
  if (beyond) return beyond;
  if (p.startsWith('/extended/v1/tx/multiple')) return 'tx/multiple';
  if (p.startsWith('/extended/v1/tx/mempool/stats')) return 'mempool/stats';
  if (p.startsWith('/extended/v1/tx/')) return 'tx';
  if (p.startsWith('/extended/v2/mempool/fees')) return 'mempool/fees';
  if (p.startsWith('/extended/v2/blocks/')) return 'blocks';
  if (p.startsWith('/extended/v1/block/by_burn_block_height/')) return 'block/by_burn_block_height';
  if (p.startsWith('/extended/v2/smart-contracts/status')) return 'contracts/status';
  if (p.endsWith('/balances')) return 'address/balances';
  if (p.endsWith('/transactions_with_transfers')) return 'address/transactions_with_transfers';
  if (p.endsWith('/with_transfers')) return 'address/with_transfers';
  throw new Error(`no endpoint family for golden path ${path}`);
}

/**
 * Paths the original API was asked on `fixture`, `perFamily` of each endpoint family spread over the chain:
 * what a test fires at an API to touch every family with real parameters.
 */
export function familySample(fixture: string, perFamily: number): string[] {
  const byFamily = new Map<Family, string[]>();
  for (const { path } of loadGolden(fixture)) {
    const family = familyOf(path);
    byFamily.set(family, [...(byFamily.get(family) ?? []), path]);
  }
  if (byFamily.size !== FAMILIES.length)
    throw new Error(`${fixture}: golden paths of ${byFamily.size} families`);
  return [...byFamily.values()].flatMap((paths) => {
    const step = Math.max(1, Math.floor(paths.length / perFamily));
    return paths.filter((_, i) => i % step === 0).slice(0, perFamily);
  });
}

/** Drops what legitimately differs between two imports (golden/README.md "Compare with care"). */
export function normalize(path: string, body: unknown): unknown {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      // A microblock tx's block_time, unconfirmed or confirmed since, is the time its microblock reached
      // the indexer (golden/README.md): the reference's import time there, the recorded receive time here.
      const { is_unanchored, microblock_hash } = value as {
        is_unanchored?: unknown;
        microblock_hash?: unknown;
      };
      const streamed =
        is_unanchored === true || (typeof microblock_hash === 'string' && microblock_hash !== '0x');
      for (const [k, v] of Object.entries(value)) {
        if (k === 'receipt_time' || k === 'receipt_time_iso') continue;
        if (streamed && (k === 'block_time' || k === 'block_time_iso')) continue;
        out[k] = strip(v);
      }
      return out;
    }
    return value;
  };
  const normalized = strip(body);
  if (familyOf(path) === 'address/transactions_with_transfers') {
    const page = normalized as {
      results?: { tx: { block_height: number; tx_index: number; tx_id: string } }[];
    };
    // Ties of the sort key (boot-contract deploys of the boot address) come in no defined order.
    page.results?.sort(
      (a, b) =>
        b.tx.block_height - a.tx.block_height ||
        b.tx.tx_index - a.tx.tx_index ||
        a.tx.tx_id.localeCompare(b.tx.tx_id),
    );
  }
  if (TX_LIST_FAMILIES.has(familyOf(path))) {
    const page = normalized as { results?: unknown[] };
    if (Array.isArray(page.results)) page.results = inChainOrder(page.results);
  }
  if (familyOf(path) === 'block/by_burn_block_height') {
    const block = normalized as { height?: number; txs?: string[] };
    // Genesis txs adopted into block 1 take tx_index + 1 and tie with block 1's own: no defined order.
    if (block.height === 1) block.txs?.sort();
  }
  return normalized;
}

/** The lists of transactions whose ties of the sort key come in no defined order (docs/upstream.md C.0). */
const TX_LIST_FAMILIES = new Set<Family>(['v2/address/transactions', 'v2/block/transactions', 'tx/list']);

/** A list's items (txs, or `{tx, ...}`), each run sharing height, microblock sequence and tx index by tx id. */
function inChainOrder(items: unknown[]): unknown[] {
  type Tx = { tx_id: string; block_height: number; microblock_sequence: number; tx_index: number };
  const txOf = (item: unknown) => ((item as { tx?: Tx }).tx ?? item) as Tx;
  const key = (tx: Tx) => `${tx.block_height}:${tx.microblock_sequence}:${tx.tx_index}`;
  const out: unknown[] = [];
  let run: unknown[] = [];
  const flush = () => {
    out.push(...run.sort((a, b) => txOf(a).tx_id.localeCompare(txOf(b).tx_id)));
    run = [];
  };
  for (const item of items) {
    if (run.length > 0 && key(txOf(run[0])) !== key(txOf(item))) flush();
    run.push(item);
  }
  flush();
  return out;
}

interface RecordResult {
  path: string;
  family: Family;
  ok: boolean;
  deliberate: boolean;
  detail?: string;
}

/** The first place two JSON values differ, as `path: ours vs golden`. */
export function firstDifference(ours: unknown, golden: unknown, at = ''): string | null {
  if (isDeepStrictEqual(ours, golden)) return null;
  if (ours && golden && typeof ours === 'object' && typeof golden === 'object') {
    if (Array.isArray(ours) !== Array.isArray(golden)) return `${at || '.'}: array vs object`;
    if (Array.isArray(ours) && Array.isArray(golden) && ours.length !== golden.length) {
      return `${at}.length: ${ours.length} vs ${golden.length}`;
    }
    const keys = new Set([...Object.keys(ours), ...Object.keys(golden)]);
    for (const key of keys) {
      const a = (ours as Record<string, unknown>)[key];
      const b = (golden as Record<string, unknown>)[key];
      if (!(key in (ours as object)))
        return `${at}.${key}: missing (golden ${JSON.stringify(b)?.slice(0, 200)})`;
      if (!(key in (golden as object)))
        return `${at}.${key}: extra (ours ${JSON.stringify(a)?.slice(0, 200)})`;
      const diff = firstDifference(a, b, `${at}.${key}`);
      if (diff) return diff;
    }
  }
  return `${at || '.'}: ${JSON.stringify(ours)?.slice(0, 300)} vs ${JSON.stringify(golden)?.slice(0, 300)}`;
}

/**
 * What of an answer's key order is defined: all of it, but `tx/multiple`'s ids, which the original lists in the
 * order its query returned the rows (request order, but for ties it leaves undefined: the genesis txs block 1
 * adopts) and this API in request order.
 */
function keyOrdered(path: string, body: unknown): unknown {
  if (familyOf(path) !== 'tx/multiple' || !body || typeof body !== 'object') return body;
  return Object.fromEntries(Object.entries(body).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The first object whose keys come in another order than the golden's, as `path: ours vs golden` (an answer's
 * key order is part of its shape: clients diff and hash the text). Call it on values found equal.
 */
function keyOrderDifference(ours: unknown, golden: unknown, at = ''): string | null {
  if (!ours || !golden || typeof ours !== 'object' || typeof golden !== 'object') return null;
  if (Array.isArray(ours) && Array.isArray(golden)) {
    for (let i = 0; i < ours.length; i++) {
      const diff = keyOrderDifference(ours[i], golden[i], `${at}[${i}]`);
      if (diff) return diff;
    }
    return null;
  }
  const ourKeys = Object.keys(ours);
  const goldenKeys = Object.keys(golden);
  if (ourKeys.join() !== goldenKeys.join()) {
    return `${at || '.'}: key order ${ourKeys.join(',')} vs ${goldenKeys.join(',')}`;
  }
  for (const key of ourKeys) {
    const diff = keyOrderDifference(
      (ours as Record<string, unknown>)[key],
      (golden as Record<string, unknown>)[key],
      `${at}.${key}`,
    );
    if (diff) return diff;
  }
  return null;
}

async function request(app: FastifyInstance, path: string) {
  let response = await app.inject({ method: 'GET', url: path });
  // The reference capture followed redirects (tx ids without 0x).
  for (let hops = 0; hops < 3 && response.statusCode >= 300 && response.statusCode < 400; hops++) {
    response = await app.inject({ method: 'GET', url: String(response.headers.location) });
  }
  let body: unknown = null;
  try {
    body = response.body.length > 0 ? JSON.parse(response.body) : null;
  } catch {
    body = response.body;
  }
  return { status: response.statusCode, body };
}

/** What a deliberate difference may consult: the fixture's other golden records, and the usual comparison. */
function goldenContext(records: GoldenRecord[]): GoldenContext {
  const byPath = new Map(records.map((r) => [r.path, r]));
  return {
    golden: (path) => byPath.get(path),
    records: () => records,
    compare: (path, ours, expected) => firstDifference(normalize(path, ours), normalize(path, expected)),
  };
}

async function compareRecord(
  app: FastifyInstance,
  record: GoldenRecord,
  context: GoldenContext = goldenContext([record]),
): Promise<RecordResult> {
  const family = familyOf(record.path);
  const ours = await request(app, record.path);
  const deliberate = findDeliberateDifference(record, context);
  if (deliberate) {
    if (ours.status !== deliberate.expectStatus) {
      return {
        path: record.path,
        family,
        ok: false,
        deliberate: true,
        detail: `deliberate difference: expected ${deliberate.expectStatus}, got ${ours.status}`,
      };
    }
    const detail = deliberate.expectBody?.(ours.body, record, context) ?? null;
    return { path: record.path, family, ok: detail === null, deliberate: true, detail: detail ?? undefined };
  }
  if (ours.status !== record.status) {
    return {
      path: record.path,
      family,
      ok: false,
      deliberate: false,
      detail: `status ${ours.status} vs ${record.status}: ${JSON.stringify(ours.body)?.slice(0, 300)}`,
    };
  }
  const diff =
    firstDifference(normalize(record.path, ours.body), normalize(record.path, record.body)) ??
    keyOrderDifference(keyOrdered(record.path, ours.body), keyOrdered(record.path, record.body));
  return { path: record.path, family, ok: diff === null, deliberate: false, detail: diff ?? undefined };
}

export interface FixtureRun {
  fixture: string;
  engine: Engine;
  results: RecordResult[];
}

/** The beyond golden of a fixture (`beyond/<fixture>`, `generated/<chain>-beyond`), when it has one. */
function beyondGoldenOf(fixture: string): string | undefined {
  const names = beyondGoldenNames();
  return [`beyond/${fixture}`, `${fixture}-beyond`].find((name) => names.includes(name));
}

/** Replays a fixture into a fresh database of the engine and compares every golden record of the families. */
export async function runFixture(
  fixture: string,
  engine: Engine,
  families: readonly Family[] = FAMILIES,
): Promise<FixtureRun> {
  const { app, close } = await startTestApi({ engine, fixture, apiVersion: 'conformance' });
  try {
    const beyond = families.some((f) => (BEYOND_FAMILIES as readonly Family[]).includes(f))
      ? beyondGoldenOf(fixture)
      : undefined;
    const golden = [...loadGolden(fixture), ...(beyond ? loadGolden(beyond) : [])];
    const context = goldenContext(golden);
    const records = golden.filter((r) => families.includes(familyOf(r.path)));
    const results: RecordResult[] = [];
    for (const record of records) results.push(await compareRecord(app, record, context));
    return { fixture, engine, results };
  } finally {
    await close();
  }
}

/** How many records of each family a run compared. */
export function recordsPerFamily(
  run: FixtureRun,
  families: readonly Family[],
): Partial<Record<Family, number>> {
  const counts: Partial<Record<Family, number>> = {};
  for (const r of run.results)
    if (families.includes(r.family)) counts[r.family] = (counts[r.family] ?? 0) + 1;
  return counts;
}

/** A table per fixture and family: records, matching, differing; then the first differences. */
export function formatReport(runs: FixtureRun[], maxDifferences = 5): string {
  const lines: string[] = [];
  for (const run of runs) {
    lines.push(`\n${run.fixture} (${run.engine})`);
    lines.push(
      `  ${'family'.padEnd(40)} ${'records'.padStart(8)} ${'match'.padStart(8)} ${'differ'.padStart(8)}`,
    );
    const byFamily = new Map<Family, RecordResult[]>();
    for (const r of run.results) byFamily.set(r.family, [...(byFamily.get(r.family) ?? []), r]);
    for (const family of [...FAMILIES, ...BEYOND_FAMILIES]) {
      const results = byFamily.get(family);
      if (!results) continue;
      const ok = results.filter((r) => r.ok).length;
      lines.push(
        `  ${family.padEnd(40)} ${String(results.length).padStart(8)} ${String(ok).padStart(8)} ${String(results.length - ok).padStart(8)}`,
      );
    }
    const failures = run.results.filter((r) => !r.ok);
    for (const f of failures.slice(0, maxDifferences)) lines.push(`    ✗ ${f.path}\n        ${f.detail}`);
    if (failures.length > maxDifferences) lines.push(`    … and ${failures.length - maxDifferences} more`);
  }
  return lines.join('\n');
}

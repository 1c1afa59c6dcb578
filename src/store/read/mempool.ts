import type { Sql } from '../db.js';
import { TxTypeId } from '../schema/codes.js';

// Aggregates of the pending mempool (`mempool_txs.pruned = false`) for the statistics and fee-priority
// endpoints. Percentiles are PostgreSQL's `percentile_cont` (linear interpolation over double precision).
// Exact percentiles need every pending row, so they are not computed per request: one SQL statement computes
// all of them for one mempool state, and each API process keeps the result in memory, keyed by that state
// (`chain_tip.mempool_version`, bumped by ingest in the same transaction as every mempool change and every new
// block, with the tip height and `mempool_updated_at`). The key and the rows are read by the same statement,
// so a cached result is exactly the mempool of its key, whichever process or replica computed it.

export interface Percentiles {
  p25: number | null;
  p50: number | null;
  p75: number | null;
  p95: number | null;
}

interface MempoolGroupAggregate {
  tx_count: number;
  fee_rate: Percentiles;
  /** age in blocks: (tip + 1) − receipt_block_height */
  age: Percentiles;
  tx_size: Percentiles;
}

export interface MempoolAggregates {
  /** the mempool state these numbers describe (`mempoolStateKey`) */
  key: string;
  mempool_version: number;
  /** `extract(epoch FROM chain_tip.mempool_updated_at)` of that state: the mempool ETag */
  mempool_updated_at: string;
  /** per type id, versioned smart contracts (6) counted as smart contracts (1); absent when none pending */
  groups: Map<number, MempoolGroupAggregate>;
  /** fee percentiles over every pending tx, whatever its type */
  all_fee_rate: Percentiles;
}

export const MempoolTypeGroup = {
  token_transfer: TxTypeId.token_transfer,
  smart_contract: TxTypeId.smart_contract,
  contract_call: TxTypeId.contract_call,
  poison_microblock: TxTypeId.poison_microblock,
} as const;

/** Identifies one mempool state; the tip height is part of it because ages depend on it. */
export function mempoolStateKey(state: {
  mempool_version: number;
  block_height: number;
  mempool_updated_at: string;
}): string {
  return `${state.mempool_version}/${state.block_height}/${state.mempool_updated_at}`;
}

/** PostgreSQL's `round(double precision)`: to the nearest integer, halves to even (1000.5 → 1000, 1001.5 → 1002). */
export function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff < 0.5) return floor;
  if (diff > 0.5) return floor + 1;
  return floor % 2 === 0 ? floor : floor + 1;
}

const NO_PERCENTILES: Percentiles = { p25: null, p50: null, p75: null, p95: null };

function percentiles(values: (number | null)[] | null): Percentiles {
  if (!values) return NO_PERCENTILES;
  const [p25, p50, p75, p95] = values;
  return { p25, p50, p75, p95 };
}

interface AggregateRow {
  /** null on the grand-total row */
  type_group: number | null;
  tx_count: number;
  fee_rate: (number | null)[] | null;
  age: (number | null)[] | null;
  tx_size: (number | null)[] | null;
  mempool_version: number;
  block_height: number;
  mempool_updated_at: string;
}

/**
 * One pass over the pending mempool (a bitmap scan of a `NOT pruned` partial index): per type group, plus the
 * grand total (its fee percentiles are the `all` fee priorities; an empty mempool still yields that row).
 * The chain_tip values come from the same statement, hence the same snapshot.
 * @internal exported for the mempool bench
 */
export async function computeMempoolAggregates(sql: Sql): Promise<MempoolAggregates> {
  const rows = await sql.begin('READ ONLY', async (tx) => {
    // The planner's cost of this statement grows with the mempool; JIT compilation (hundreds of ms) would
    // never pay off for a handful of sorts.
    await tx`SET LOCAL jit = off`;
    return tx<AggregateRow[]>`
      SELECT CASE WHEN type_id = ${TxTypeId.versioned_smart_contract} THEN ${TxTypeId.smart_contract}::smallint
          ELSE type_id END AS type_group, count(*)::int AS tx_count,
        percentile_cont(ARRAY[0.25, 0.5, 0.75, 0.95]::float8[]) WITHIN GROUP (ORDER BY fee_rate) AS fee_rate,
        percentile_cont(ARRAY[0.25, 0.5, 0.75, 0.95]::float8[])
          WITHIN GROUP (ORDER BY (SELECT block_height FROM chain_tip) + 1 - receipt_block_height) AS age,
        percentile_cont(ARRAY[0.25, 0.5, 0.75, 0.95]::float8[]) WITHIN GROUP (ORDER BY tx_size) AS tx_size,
        (SELECT mempool_version FROM chain_tip) AS mempool_version,
        (SELECT block_height FROM chain_tip) AS block_height,
        (SELECT extract(epoch FROM mempool_updated_at)::text FROM chain_tip) AS mempool_updated_at
      FROM mempool_txs
      WHERE NOT pruned
      GROUP BY GROUPING SETS ((1), ())`;
  });
  const total = rows.find((r) => r.type_group === null);
  if (!total || total.mempool_version === null) throw new Error('mempool aggregates: no chain_tip row');
  const groups = new Map<number, MempoolGroupAggregate>();
  for (const r of rows) {
    if (r.type_group === null) continue;
    groups.set(r.type_group, {
      tx_count: r.tx_count,
      fee_rate: percentiles(r.fee_rate),
      age: percentiles(r.age),
      tx_size: percentiles(r.tx_size),
    });
  }
  return {
    key: mempoolStateKey(total),
    mempool_version: total.mempool_version,
    mempool_updated_at: total.mempool_updated_at,
    groups,
    all_fee_rate: total.tx_count > 0 ? percentiles(total.fee_rate) : NO_PERCENTILES,
  };
}

/** How far behind the mempool an answer may be while a newer snapshot is computed (`MempoolAggregatesCache`). */
const MEMPOOL_STALE_MS = 2000;

/**
 * This process's latest mempool aggregates, computed once per mempool state, and usually at most one
 * computation in flight.
 *
 * `get` answers from memory when the caller's mempool state is the cached one. When the mempool changed, the
 * first caller to notice starts the computation and waits for it; callers arriving while one runs get the
 * previous snapshot (with its own ETag: a body always matches its tag) if that snapshot was the current
 * mempool less than `MEMPOOL_STALE_MS` ago, else they wait too. So one request per process and mempool change
 * pays for the computation, no answer lags the mempool by more than that bound, and when requests do not
 * overlap every answer is current.
 */
export class MempoolAggregatesCache {
  /** `currentAt`: the last time the cached snapshot was known to be the mempool's current state */
  private latest: { value: MempoolAggregates; seq: number; currentAt: number } | undefined;
  private seq = 0;
  private inflight:
    { seq: number; forKey: string; startedAt: number; result: Promise<MempoolAggregates> } | undefined;

  constructor(
    private readonly compute: (sql: Sql) => Promise<MempoolAggregates> = computeMempoolAggregates,
    private readonly staleMs = MEMPOOL_STALE_MS,
  ) {}

  /**
   * @param key the caller's mempool state (`mempoolStateKey` of its chain_tip read)
   * @param readAt `performance.now()` right after that read completed
   */
  async get(sql: Sql, key: string, readAt: number): Promise<MempoolAggregates> {
    const latest = this.latest;
    if (latest?.value.key === key) {
      latest.currentAt = Math.max(latest.currentAt, readAt);
      return latest.value;
    }
    const inflight = this.inflight;
    const recent = latest !== undefined && performance.now() - latest.currentAt <= this.staleMs;
    // A computation sent after the caller's read, or for the caller's state, sees at least that state.
    if (inflight && (inflight.forKey === key || inflight.startedAt >= readAt)) {
      return recent ? latest.value : inflight.result;
    }
    // An older computation is running: rather than piling another one on it, answer from the recent
    // snapshot; the first request after it finishes starts the next one.
    if (inflight && recent) return latest.value;
    return this.start(sql, key);
  }

  private start(sql: Sql, forKey: string): Promise<MempoolAggregates> {
    const seq = ++this.seq;
    // taken before the query is sent: whatever was read before this instant is older than its snapshot
    const startedAt = performance.now();
    const result = this.compute(sql).then((value) => {
      // a computation sent later saw a later snapshot: an earlier one finishing last must not replace it
      if (!this.latest || seq > this.latest.seq) this.latest = { value, seq, currentAt: startedAt };
      return value;
    });
    this.inflight = { seq, forKey, startedAt, result };
    const clear = () => {
      if (this.inflight?.seq === seq) this.inflight = undefined;
    };
    result.then(clear, clear);
    return result;
  }
}

import type { Engine, Sql } from './db.js';

/**
 * Tables ingest grows fast, and the columns its statements' plans depend on (keys, joins, filters). The
 * wide payload columns (hex, JSON, reprs) are left to autovacuum's analyze: computing their statistics
 * from a sample is most of an ANALYZE's cost, and no plan of ingest filters on them.
 */
const GROWING_TABLES = [
  'txs (tx_id, index_block_hash, microblock_hash, block_height, canonical, microblock_canonical, ' +
    'sender_address, nonce, sponsored, sponsor_address, smart_contract_contract_id)',
  'events (tx_id, index_block_hash, microblock_hash, kind, sender, recipient, locked_address, block_height)',
  'principal_txs',
  'mempool_txs (tx_id, pruned, status, sender_address, nonce, sponsored, sponsor_address, sponsor_nonce, ' +
    'token_transfer_recipient, smart_contract_contract_id, type_id, fee_rate, receipt_block_height, receipt_time)',
  'principal_stats',
  'stx_balances',
  'ft_balances',
  'nft_balances',
  'smart_contracts (contract_id, tx_id, index_block_hash, microblock_hash, block_height, canonical, ' +
    'microblock_canonical)',
  'blocks',
] as const;

/**
 * PGlite: the statistics target of ingest's ANALYZE (PostgreSQL's default is 100: a sample of 30,000 rows).
 * PGlite runs each statement on the process's main thread, and `ANALYZE txs` after a 40 MB block (30,000
 * txs) held it 2.5 s on the loaded 2-core machine (bench/observer-stall.ts); a sample of 3,000 rows costs a
 * tenth. The plans this is for need the tables' sizes (exact page counts, row counts estimated from the
 * sample) and rough distinct counts, which a small sample gives; finer statistics are autovacuum's work on
 * PostgreSQL, where ingest's ANALYZE keeps the default (it runs on the server's own process there).
 */
const PGLITE_STATISTICS_TARGET = 10;

/** Transactions indexed before the first ANALYZE of a young database (then each time the count doubles). */
const FIRST_ANALYZE_TXS = 10_000;

/** How a background ANALYZE ended: the estimated transaction count analyzed at and how long it took. */
export interface Analyzed {
  txs: number;
  ms: number;
}

/**
 * A database indexing from genesis grows faster than autovacuum re-analyzes it (it looks once a minute):
 * plans made on the statistics of a table a tenth of its size scan whole tables where an index probe
 * would do. So while the index is young, ingest itself analyzes the tables it grows each time the number
 * of transactions doubles (a logarithmic number of times, after which autovacuum keeps up).
 *
 * The ANALYZE runs after the message that made it due is committed and answered, not before: it took ~370 ms
 * on PGlite after a 40 MB block (which runs it on the process's main thread: /health waited for it) and 12%
 * of PostgreSQL's ingest statement time. It runs one table per statement, so no statement is long, on the
 * ingest connection: the next message's transaction goes between two of them.
 */
export class AnalyzeSchedule {
  /** transactions indexed since the last ANALYZE, and how many the tables held then (-1: not read yet) */
  private txsSinceAnalyze = 0;
  private txsAtAnalyze = -1;
  private running: Promise<void> | undefined;

  constructor(
    private readonly engine: Engine,
    private readonly onAnalyzed: (analyzed: Analyzed) => void,
    private readonly onFailed: (err: unknown) => void,
  ) {}

  /**
   * Counts `txs` more transactions indexed (committed) and, when an ANALYZE is due and none runs, starts
   * one in the background (`settled` waits for it). A failed ANALYZE is reported and tried again later.
   */
  afterIndexing(sql: Sql, txs: number): void {
    this.txsSinceAnalyze += txs;
    if (this.running) return;
    this.running = this.analyzeIfDue(sql)
      .then((analyzed) => {
        if (analyzed) this.onAnalyzed(analyzed);
      }, this.onFailed)
      .finally(() => (this.running = undefined));
  }

  /** Resolves once the ANALYZE running in the background, if any, has ended. */
  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async analyzeIfDue(sql: Sql): Promise<Analyzed | null> {
    if (this.txsAtAnalyze < 0) {
      const [row] = await sql<{ n: number }[]>`
        SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = 'txs'::regclass`;
      this.txsAtAnalyze = row?.n ?? 0;
    }
    const counted = this.txsSinceAnalyze;
    if (counted < Math.max(FIRST_ANALYZE_TXS, this.txsAtAnalyze)) return null;
    const started = performance.now();
    for (const table of GROWING_TABLES) {
      if (this.engine === 'pglite') {
        await sql.begin(async (tx) => {
          await tx.unsafe(`SET LOCAL default_statistics_target = ${PGLITE_STATISTICS_TARGET}`);
          await tx.unsafe(`ANALYZE ${table}`);
        });
      } else await sql.unsafe(`ANALYZE ${table}`);
    }
    this.txsAtAnalyze += counted;
    this.txsSinceAnalyze -= counted;
    return { txs: this.txsAtAnalyze, ms: Math.round(performance.now() - started) };
  }
}

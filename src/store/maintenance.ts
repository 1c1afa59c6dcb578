import type { Sql } from './db.js';

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

/** Transactions indexed before the first ANALYZE of a young database (then each time the count doubles). */
const FIRST_ANALYZE_TXS = 10_000;

/**
 * A database indexing from genesis grows faster than autovacuum re-analyzes it (it looks once a minute):
 * plans made on the statistics of a table a tenth of its size scan whole tables where an index probe
 * would do. So while the index is young, ingest itself analyzes the tables it grows each time the number
 * of transactions doubles (a logarithmic number of times, after which autovacuum keeps up).
 */
export class AnalyzeSchedule {
  /** transactions indexed since the last ANALYZE, and how many the tables held then (-1: not read yet) */
  private txsSinceAnalyze = 0;
  private txsAtAnalyze = -1;

  /**
   * Counts `txs` more transactions indexed (outside any message's transaction) and analyzes when due.
   * Resolves the estimated transaction count analyzed at, or null when nothing was due.
   */
  async afterIndexing(sql: Sql, txs: number): Promise<number | null> {
    this.txsSinceAnalyze += txs;
    if (this.txsAtAnalyze < 0) {
      const [row] = await sql<{ n: number }[]>`
        SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = 'txs'::regclass`;
      this.txsAtAnalyze = row?.n ?? 0;
    }
    if (this.txsSinceAnalyze < Math.max(FIRST_ANALYZE_TXS, this.txsAtAnalyze)) return null;
    await sql.unsafe(`ANALYZE ${GROWING_TABLES.join(', ')}`);
    this.txsAtAnalyze += this.txsSinceAnalyze;
    this.txsSinceAnalyze = 0;
    return this.txsAtAnalyze;
  }
}

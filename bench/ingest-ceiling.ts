// The ceiling of ingest: what PostgreSQL alone spends to store the rows an ingest stored.
//
// After a replay, the rows of every table ingest wrote are copied, table to table inside the server, into
// empty copies of those tables (same columns, storage, indexes, fill factor) in a scratch schema: one
// transaction per block's worth of rows, committed with the cluster's durability, on one connection. No
// indexer, no parsing of parameters, no reads, no round trip per statement, each row written once as it
// ended (ingest also updates running totals and mempool rows), indexes starting empty (ingest's grow with the
// chain): every difference makes the copy cheaper than ingest, so its rate bounds ingest's from above.
//
// Ingest applies a message in one transaction, which one PostgreSQL backend runs on one core; so the copy's
// backend CPU per tx bounds what any indexer can reach with this schema: 1e6 / (backend µs per tx) txs/s.
import type { Sql } from 'postgres';
import { processTreeCpuSeconds } from './ingest.js';

export interface IngestCeiling {
  /** canonical txs in the copied share of the chain */
  txs: number;
  /** the share of each table's pages copied */
  share: number;
  transactions: number;
  seconds: number;
  /** txs/s of the copy itself (wall time, one connection) */
  txsPerSecond: number;
  /** CPU µs per tx of the copying backend, and of all PostgreSQL processes (WAL writer, checkpointer...) */
  backendUsPerTx: number;
  postgresUsPerTx?: number;
  /** 1e6 / backendUsPerTx: the txs/s one backend could apply if it did nothing but store the rows */
  oneBackendTxsPerSecond: number;
  walBytesPerTx: number;
  /** per table: rows copied per tx, and the copy statements' wall µs per tx (the backend's time, with waits) */
  tables: { name: string; rowsPerTx: number; usPerTx: number }[];
}

const SCRATCH = 'ingest_ceiling';
/** Tables that hold no chain data (written by `migrate` or by key management, not by ingest). */
const NOT_INGEST = new Set(['schema_migrations', 'api_keys']);

/**
 * Copies the first `share` of every ingest table's pages (heap order is insertion order, so the start of the
 * chain) in `transactions` transactions, measuring the copying backend's CPU (and all of PostgreSQL's when
 * `pgPid` is given) and the WAL written, then drops the copies.
 */
export async function measureIngestCeiling(
  sql: Sql,
  options: { share: number; transactions: number; pgPid?: number },
): Promise<IngestCeiling> {
  const tables = await sql<{ name: string; pages: number; reloptions: string[] | null }[]>`
    SELECT c.relname AS name, (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS pages,
      c.reloptions
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind = 'r' AND pg_relation_size(c.oid) > 0
    ORDER BY c.relname`;
  const copied = tables.filter((t) => !NOT_INGEST.has(t.name));
  await sql`DROP SCHEMA IF EXISTS ${sql(SCRATCH)} CASCADE`;
  await sql`CREATE SCHEMA ${sql(SCRATCH)}`;
  try {
    for (const t of copied) {
      await sql`CREATE TABLE ${sql(SCRATCH)}.${sql(t.name)} (LIKE public.${sql(t.name)} INCLUDING ALL)`;
      // LIKE copies columns, storage, defaults and indexes, not the table's storage parameters (fill factor)
      if (t.reloptions?.length) {
        await sql.unsafe(`ALTER TABLE ${SCRATCH}.${quoted(t.name)} SET (${t.reloptions.join(', ')})`);
      }
    }
    const [{ pid }] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    const [{ lsn: lsn0 }] = await sql<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`;
    const backend0 = processTreeCpuSeconds(pid);
    const postgres0 = options.pgPid ? processTreeCpuSeconds(options.pgPid) : 0;
    const started = performance.now();
    const tableMs = new Map(copied.map((t) => [t.name, 0]));
    const tableRows = new Map(copied.map((t) => [t.name, 0]));
    for (let i = 0; i < options.transactions; i++) {
      await sql.begin(async (tx) => {
        for (const t of copied) {
          const pages = Math.ceil(t.pages * options.share);
          const from = Math.floor((i * pages) / options.transactions);
          const to = Math.floor(((i + 1) * pages) / options.transactions);
          if (to === from) continue;
          // a TID range scan: this slice's pages, in heap (insertion) order
          const statementStarted = performance.now();
          const { count } = await tx`
            INSERT INTO ${sql(SCRATCH)}.${sql(t.name)} OVERRIDING SYSTEM VALUE
            SELECT * FROM public.${sql(t.name)} WHERE ctid >= ${`(${from},0)`}::tid AND ctid < ${`(${to},0)`}::tid`;
          tableMs.set(t.name, tableMs.get(t.name)! + performance.now() - statementStarted);
          tableRows.set(t.name, tableRows.get(t.name)! + count);
        }
      });
    }
    const seconds = (performance.now() - started) / 1000;
    const backend = processTreeCpuSeconds(pid) - backend0;
    const postgres = options.pgPid ? processTreeCpuSeconds(options.pgPid) - postgres0 : undefined;
    const [{ wal }] = await sql<{ wal: number }[]>`
      SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${lsn0}::pg_lsn)::float8 AS wal`;
    // counted as the bench counts an ingest's txs (bench/ingest.ts)
    const [{ n: txs }] = await sql<{ n: number }[]>`
      SELECT count(DISTINCT tx_id)::int AS n FROM ${sql(SCRATCH)}.txs
      WHERE canonical AND microblock_canonical AND index_block_hash <> ''`;
    const perTx = (value: number) => Math.round(value / Math.max(txs, 1));
    const backendUsPerTx = perTx(backend * 1e6);
    return {
      txs,
      share: options.share,
      transactions: options.transactions,
      seconds: Math.round(seconds * 100) / 100,
      txsPerSecond: Math.round(txs / seconds),
      backendUsPerTx,
      postgresUsPerTx: postgres === undefined ? undefined : perTx(postgres * 1e6),
      oneBackendTxsPerSecond: Math.round(1e6 / Math.max(backendUsPerTx, 1)),
      walBytesPerTx: perTx(wal),
      tables: copied
        .map((t) => ({
          name: t.name,
          rowsPerTx: Math.round((tableRows.get(t.name)! / Math.max(txs, 1)) * 100) / 100,
          usPerTx: perTx(tableMs.get(t.name)! * 1000),
        }))
        .filter((t) => t.rowsPerTx > 0)
        .sort((a, b) => b.usPerTx - a.usPerTx),
    };
  } finally {
    await sql`DROP SCHEMA IF EXISTS ${sql(SCRATCH)} CASCADE`;
  }
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

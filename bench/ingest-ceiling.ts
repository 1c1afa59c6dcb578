// The ceiling of ingest: what PostgreSQL alone spends to store the rows an ingest stored.
//
// After a replay, the rows of every table ingest wrote are written out as COPY text (on a second connection)
// and loaded back with COPY into empty copies of those tables (same columns, storage, indexes, fill factor) in
// a scratch schema: one transaction per block's worth of rows, committed with the cluster's durability, on one
// connection. COPY is the cheapest way to hand PostgreSQL rows: their text is parsed (as ingest's is), but there is no indexer, no read, no computed column, no round trip
// per statement, each row is written once as it ended (ingest also updates running totals and mempool rows),
// and the indexes start empty (ingest's grow with the chain). Every difference makes the copy cheaper than
// ingest, so its cost bounds ingest's from below and its rate bounds ingest's from above.
//
// Ingest applies a message in one transaction, which one PostgreSQL backend runs on one core; so the writing
// backend's CPU per tx bounds what any indexer can reach with this schema: 1e6 / (backend µs per tx) txs/s.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres, { type Sql } from 'postgres';
import { processTreeCpuSeconds } from './ingest.js';

export interface IngestCeiling {
  /** canonical txs in the copied share of the chain */
  txs: number;
  /** the share of each table's pages copied */
  share: number;
  transactions: number;
  seconds: number;
  /** txs/s of the writes (wall time of the writing transactions, one connection) */
  txsPerSecond: number;
  /** CPU µs per tx of the loading backend, and of all PostgreSQL processes but the reading one (WAL writer...) */
  backendUsPerTx: number;
  postgresUsPerTx?: number;
  /** 1e6 / backendUsPerTx: the txs/s one backend could apply if it did nothing but store the rows */
  oneBackendTxsPerSecond: number;
  walBytesPerTx: number;
  /** per table: rows copied per tx, and the writing COPY's wall µs per tx (the backend's time, with waits) */
  tables: { name: string; rowsPerTx: number; usPerTx: number }[];
}

const SCRATCH = 'ingest_ceiling';
/** Tables that hold no chain data (written by `migrate` or by key management, not by ingest). */
const NOT_INGEST = new Set(['schema_migrations', 'api_keys']);

/**
 * Copies the first `share` of every ingest table's pages (heap order is insertion order, so the start of the
 * chain) of the database at `url` in `transactions` transactions, measuring the writing backend's CPU (and all
 * of PostgreSQL's when `pgPid` is given, the reading backend's included) and the WAL written, then drops the
 * copies.
 */
export async function measureIngestCeiling(
  url: string,
  options: { share: number; transactions: number; pgPid?: number },
): Promise<IngestCeiling> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const reader = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await copyTables(sql, reader, options);
  } finally {
    await sql.end();
    await reader.end();
  }
}

async function copyTables(
  sql: Sql,
  reader: Sql,
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
  // Slices go through files the server writes and reads itself (the bench's cluster is local and its user a
  // superuser): postgres.js's `COPY ... TO STDOUT` stream did not end on some slices of the events table.
  const dir = mkdtempSync(join(tmpdir(), 'ingest-ceiling-'));
  chmodSync(dir, 0o777);
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
    const [{ pid: readerPid }] = await reader<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    const backend0 = processTreeCpuSeconds(pid);
    const reader0 = processTreeCpuSeconds(readerPid);
    const postgres0 = options.pgPid ? processTreeCpuSeconds(options.pgPid) : 0;
    let seconds = 0;
    const tableMs = new Map(copied.map((t) => [t.name, 0]));
    for (let i = 0; i < options.transactions; i++) {
      const slices: { name: string; file: string }[] = [];
      for (const t of copied) {
        const pages = Math.ceil(t.pages * options.share);
        const from = Math.floor((i * pages) / options.transactions);
        const to = Math.floor(((i + 1) * pages) / options.transactions);
        if (to === from) continue;
        // a TID range scan: this slice's pages, in heap (insertion) order. COPY takes no parameters: the page
        // numbers are integers computed here, the file name is made of the table's name.
        const file = join(dir, `${t.name}.copy`);
        await reader.unsafe(
          `COPY (SELECT * FROM public.${quoted(t.name)} WHERE ctid >= '(${from},0)'::tid AND ctid < '(${to},0)'::tid) ` +
            `TO ${literal(file)}`,
        );
        slices.push({ name: t.name, file });
      }
      const started = performance.now();
      await sql.begin(async (tx) => {
        for (const slice of slices) {
          const statementStarted = performance.now();
          await tx.unsafe(`COPY ${SCRATCH}.${quoted(slice.name)} FROM ${literal(slice.file)}`);
          tableMs.set(slice.name, tableMs.get(slice.name)! + performance.now() - statementStarted);
        }
      });
      seconds += (performance.now() - started) / 1000;
    }
    const backend = processTreeCpuSeconds(pid) - backend0;
    // the reading backend's work is the measurement's, not the load's
    const reading = processTreeCpuSeconds(readerPid) - reader0;
    const postgres = options.pgPid ? processTreeCpuSeconds(options.pgPid) - postgres0 - reading : undefined;
    const [{ wal }] = await sql<{ wal: number }[]>`
      SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${lsn0}::pg_lsn)::float8 AS wal`;
    // counted as the bench counts an ingest's txs (bench/ingest.ts)
    const [{ n: txs }] = await sql<{ n: number }[]>`
      SELECT count(DISTINCT tx_id)::int AS n FROM ${sql(SCRATCH)}.txs
      WHERE canonical AND microblock_canonical AND index_block_hash <> ''`;
    const tableRows = new Map<string, number>();
    for (const t of copied) {
      const [{ n }] = await sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM ${sql(SCRATCH)}.${sql(t.name)}`;
      tableRows.set(t.name, n);
    }
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
    rmSync(dir, { recursive: true, force: true });
  }
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

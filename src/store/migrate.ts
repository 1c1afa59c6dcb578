import { readdir, readFile } from 'node:fs/promises';
import type { Sql, TransactionSql } from './db.js';

// The rules of the migrations folder (unique versions, never renumbered, the next number): migrations/README.md.

const migrationsDir = new URL('./migrations/', import.meta.url);

/** Arbitrary constant: the advisory lock that keeps two processes from migrating at once. */
const MIGRATION_LOCK_KEY = 7_406_111;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The migration files of `dir` (default: this folder's migrations/), by version. Two files with one version
 * are refused before anything runs: `schema_migrations` records versions, so the second would never run on a
 * database that applied the first.
 */
export async function listMigrations(dir: URL = migrationsDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();
  const migrations = await Promise.all(
    files.map(async (file) => ({
      version: Number(file.split('_')[0]),
      name: file.replace(/\.sql$/, ''),
      sql: await readFile(new URL(file, dir), 'utf8'),
    })),
  );
  const byVersion = new Map<number, string>();
  for (const m of migrations) {
    const other = byVersion.get(m.version);
    if (other !== undefined) {
      throw new Error(`two migrations share version ${m.version}: ${other}.sql and ${m.name}.sql`);
    }
    byVersion.set(m.version, m.name);
  }
  return migrations.sort((a, b) => a.version - b.version);
}

/** Takes the migration lock for this transaction and reads the versions applied (creating the table). */
async function lockAndReadApplied(tx: TransactionSql): Promise<Set<number>> {
  await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
  await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;
  return new Set((await tx`SELECT version FROM schema_migrations`).map((r) => Number(r.version)));
}

/**
 * Applies the migrations not yet applied, in version order, each in its own transaction: a migration that
 * fails rolls back alone, and those before it stay applied (and recorded). Each transaction takes the
 * migration lock and checks again that its version is still pending, so two processes migrating at once
 * apply each migration once. Returns the names applied.
 */
export async function migrate(sql: Sql, dir: URL = migrationsDir): Promise<string[]> {
  const migrations = await listMigrations(dir);
  const done = await sql.begin(lockAndReadApplied);
  const applied: string[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    const ran = await sql.begin(async (tx) => {
      if ((await lockAndReadApplied(tx)).has(m.version)) return false;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      return true;
    });
    if (ran) applied.push(m.name);
  }
  return applied;
}

/** Migrations the code knows and the database has not applied (empty when up to date). */
export async function pendingMigrations(sql: Sql): Promise<string[]> {
  const migrations = await listMigrations();
  const [{ exists }] = await sql`SELECT to_regclass('schema_migrations') IS NOT NULL AS exists`;
  if (!exists) return migrations.map((m) => m.name);
  const done = new Set((await sql`SELECT version FROM schema_migrations`).map((r) => Number(r.version)));
  return migrations.filter((m) => !done.has(m.version)).map((m) => m.name);
}

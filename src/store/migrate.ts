import { readdir, readFile } from 'node:fs/promises';
import type { Sql } from './db.js';

const migrationsDir = new URL('./migrations/', import.meta.url);

/** Arbitrary constant: the advisory lock that keeps two processes from migrating at once. */
const MIGRATION_LOCK_KEY = 7_406_111;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export async function listMigrations(): Promise<Migration[]> {
  const files = (await readdir(migrationsDir)).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: Number(file.split('_')[0]),
      name: file.replace(/\.sql$/, ''),
      sql: await readFile(new URL(file, migrationsDir), 'utf8'),
    })),
  );
}

/** Applies the migrations not yet applied, each in its own transaction. Returns the names applied. */
export async function migrate(sql: Sql): Promise<string[]> {
  const migrations = await listMigrations();
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`;
    const done = new Set((await tx`SELECT version FROM schema_migrations`).map((r) => Number(r.version)));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      applied.push(m.name);
    }
    return applied;
  });
}

/** Migrations the code knows and the database has not applied (empty when up to date). */
export async function pendingMigrations(sql: Sql): Promise<string[]> {
  const migrations = await listMigrations();
  const [{ exists }] = await sql`SELECT to_regclass('schema_migrations') IS NOT NULL AS exists`;
  if (!exists) return migrations.map((m) => m.name);
  const done = new Set((await sql`SELECT version FROM schema_migrations`).map((r) => Number(r.version)));
  return migrations.filter((m) => !done.has(m.version)).map((m) => m.name);
}
